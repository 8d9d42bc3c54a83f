import Foundation
import Testing
import TestSupport

/// Every public declaration of chime's UserNotifications module is Apple's, as Apple's documentation
/// declares it (Tests/apple-api/UserNotifications.txt says how that list was written and what is
/// compared). The module is read as Apple's documentation is made: its symbol graph, whose
/// declaration fragments are what the documentation prints.
@Suite struct AppleDeclarationsTests {
    @Test func everyDeclarationIsApples() throws {
        let apple = try AppleAPI(contentsOf: AppleAPI.referencePath)
        let ours = try SymbolGraph.extract(module: "UserNotifications")
        let problems = apple.differences(from: ours)
        #expect(problems.isEmpty, "chime's UserNotifications differs from Apple's declarations:\n\(problems.joined(separator: "\n"))")
        // The reading itself found what it reads: Apple's list and the module are both whole.
        #expect(apple.declarationCount > 250, "\(apple.declarationCount) declarations read from the list")
        #expect(ours.symbols.count > 250, "\(ours.symbols.count) symbols read from the module")
    }

    /// The comparison catches a drift of each kind it promises to: a default argument lost (the
    /// regression of issue 46), a label, an `async`, `@Sendable`, `open`, a deprecation, a member
    /// Apple does not have, a member Apple has that went missing.
    @Test func aSignatureThatDriftsIsCaught() throws {
        let apple = try AppleAPI(contentsOf: AppleAPI.referencePath)
        let ours = try SymbolGraph.extract(module: "UserNotifications")
        #expect(apple.differences(from: ours).isEmpty)
        func drifted(_ change: (inout SymbolGraph) -> Void) -> [String] {
            var changed = ours
            change(&changed)
            return apple.differences(from: changed)
        }
        func edit(_ parent: String, _ declaration: String, _ transform: @escaping (inout SymbolGraph.Symbol) -> Void) -> (inout SymbolGraph) -> Void {
            { graph in
                let index = graph.symbols.firstIndex { $0.parent == parent && $0.declaration == declaration }
                guard let index else { Issue.record("no \(parent) | \(declaration)"); return }
                transform(&graph.symbols[index])
            }
        }
        let add = "func add(_ request: UNNotificationRequest, withCompletionHandler completionHandler: (@Sendable ((any Error)?) -> Void)? = nil)"
        let noDefault = drifted(edit("UNUserNotificationCenter", add) { $0.declaration = $0.declaration.replacingOccurrences(of: " = nil", with: "") })
        #expect(noDefault.contains { $0.contains("add(_ request: UNNotificationRequest, withCompletionHandler") }, "\(noDefault)")
        let pending = "func getPendingNotificationRequests(completionHandler: @escaping @Sendable ([UNNotificationRequest]) -> Void)"
        #expect(!drifted(edit("UNUserNotificationCenter", pending) { $0.declaration = $0.declaration.replacingOccurrences(of: "@Sendable ", with: "") }).isEmpty)
        #expect(!drifted(edit("UNUserNotificationCenter", pending) { $0.declaration = $0.declaration.replacingOccurrences(of: "completionHandler:", with: "handler:") }).isEmpty)
        #expect(!drifted(edit("UNUserNotificationCenter", "func add(_ request: UNNotificationRequest) async throws") {
            $0.declaration = "func add(_ request: UNNotificationRequest) throws"
        }).isEmpty)
        #expect(!drifted(edit("UNUserNotificationCenter", "func requestAuthorization(options: UNAuthorizationOptions = []) async throws -> Bool") {
            $0.discardable = false
        }).isEmpty)
        #expect(!drifted(edit("UNUserNotificationCenter", "func removeAllPendingNotificationRequests()") { $0.access = "public" }).isEmpty)
        #expect(!drifted(edit("UNUserNotificationCenter", "func removeAllPendingNotificationRequests()") { $0.deprecated = true }).isEmpty)
        #expect(!drifted(edit("UNNotificationContent", "var summaryArgument: String { get }") { $0.deprecated = false }).isEmpty)
        #expect(!drifted { graph in
            graph.symbols.append(SymbolGraph.Symbol(parent: "UNUserNotificationCenter", declaration: "func flush()", access: "open",
                                                    kind: "swift.method", declared: true))
        }.isEmpty)
        #expect(!drifted { graph in graph.symbols.removeAll { $0.declaration == "func removeAllDeliveredNotifications()" } }.isEmpty)
        #expect(!drifted { graph in
            graph.relations.removeAll { $0.source == "UNMutableNotificationContent" && $0.target == "UNNotificationContent" }
        }.isEmpty)
    }
}

/// What a subclass inherits is callable on it, as on Apple's: the symbol graph lists each type's own
/// members, and Swift does not always let a subclass inherit its superclass's initializers (only when
/// it declares no designated initializer, or overrides them all), so the compiler itself is asked. Each
/// initializer and instance member Apple's list gives a superclass (of this module) is referred to
/// through each of its subclasses, in a file type-checked against the built module.
@Suite struct AppleInheritanceTests {
    @Test func everySubclassHasWhatApplesInherits() throws {
        let apple = try AppleAPI(contentsOf: AppleAPI.referencePath)
        let references = apple.inheritedReferences()
        // The reading found what it reads: UNTextInputNotificationAction's two inherited initializers among them.
        #expect(references.contains("UNTextInputNotificationAction.init(identifier:title:options:)"), "\(references)")
        #expect(references.contains("UNTextInputNotificationAction.init(identifier:title:options:icon:)"), "\(references)")
        #expect(references.contains("\\UNMutableNotificationContent.interruptionLevel") == false, "its own, not inherited: \(references)")
        #expect(references.count > 10, "\(references)")
        let errors = try SymbolGraph.typecheck(module: "UserNotifications", references: references)
        #expect(errors.isEmpty, "not inherited as on Apple's platforms:\n\(errors.joined(separator: "\n"))")
    }

    /// The check fails where it should: a member no superclass has is refused by the compiler.
    @Test func aReferenceThatIsNotInheritedIsCaught() throws {
        let errors = try SymbolGraph.typecheck(module: "UserNotifications", references: [
            "UNTextInputNotificationAction.init(identifier:title:options:)", "UNTextInputNotificationAction.init(identifier:subtitle:)",
        ])
        #expect(errors.count == 1 && errors.first?.contains("init(identifier:subtitle:)") == true, "\(errors)")
    }
}

/// Apple's declarations, as Tests/apple-api/UserNotifications.txt writes them.
struct AppleAPI {
    struct TypeEntry {
        var path: String
        var supertypes: [String]
        var declarations: [(text: String, mark: String?)] = []
    }

    var types: [TypeEntry] = []
    var protocolMembers: Set<String> = []
    var additions: Set<String> = []  // "Parent | declaration"
    var absent: [(parent: String, declaration: String)] = []

    static var referencePath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("apple-api/UserNotifications.txt").path
    }

    var declarationCount: Int { types.reduce(0) { $0 + $1.declarations.count } }

    init(contentsOf path: String) throws {
        var section = ""
        for raw in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast())
                if section != "protocol members", section != "chime's additions", section != "not on Linux" {
                    let parts = section.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                    let supertypes = parts.count > 1 ? parts[1].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } : []
                    types.append(TypeEntry(path: parts.first ?? "", supertypes: supertypes))
                }
                continue
            }
            switch section {
            case "protocol members": protocolMembers.insert(Self.normalized(line))
            case "chime's additions": additions.insert(line)
            case "not on Linux":
                let parts = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
                absent.append((parts[0] == "-" ? "" : parts[0], parts[1]))
            default:
                var text = line
                var mark: String?
                if let range = line.range(of: "  // ") {
                    text = String(line[..<range.lowerBound])
                    mark = String(line[range.upperBound...])
                }
                types[types.count - 1].declarations.append((Self.normalized(text), mark))
            }
        }
    }

    /// For each subclass of a class of this list, what it inherits from its superclasses of this list
    /// (initializers, instance properties and methods not its own, not obsoleted), as Swift refers to
    /// each: `Sub.init(a:b:)`, `\\Sub.property`, `Sub.method(_:with:)`.
    func inheritedReferences() -> [String] {
        let byName = Dictionary(types.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
        var references: [String] = []
        for type in types {
            var ownNames = Set(type.declarations.dropFirst().compactMap { Self.reference(to: $0.text) })
            var superclass = type.supertypes.first.flatMap { byName[$0] }
            while let inherited = superclass {
                for (text, mark) in inherited.declarations.dropFirst() where mark != "obsoleted" {
                    guard let name = Self.reference(to: text), !ownNames.contains(name) else { continue }
                    ownNames.insert(name)
                    references.append(name.hasPrefix("\\.") ? "\\" + type.path + name.dropFirst() : type.path + "." + name)
                }
                superclass = inherited.supertypes.first.flatMap { byName[$0] }
            }
        }
        return references
    }

    /// How Swift names a member declared as `text` when referring to it without calling it:
    /// `init(identifier:title:)`, `\\.title` for a property, `add(_:withCompletionHandler:)`;
    /// nil for what is not an instance member (class and static members, subscripts, types).
    static func reference(to text: String) -> String? {
        var words = text
        for prefix in ["convenience ", "required ", "open ", "weak ", "optional "] where words.hasPrefix(prefix) { words.removeFirst(prefix.count) }
        if words.hasPrefix("var ") {
            let name = words.dropFirst(4).prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            return name.isEmpty ? nil : "\\." + name
        }
        let base: Substring
        if words.hasPrefix("init(") || words.hasPrefix("init?(") {
            base = "init"
            words = String(words.drop { $0 != "(" })
        } else if words.hasPrefix("func ") {
            base = words.dropFirst(5).prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            words = String(words.dropFirst(5 + base.count))
            guard words.hasPrefix("(") else { return nil }  // generic methods: none in this list
        } else {
            return nil
        }
        // The labels: each top-level parameter's first word (a parameter's type may hold parentheses).
        var labels: [String] = []
        var depth = 0
        var parameter = ""
        for character in words.dropFirst() {
            if depth == 0, character == ")" || character == "," {
                let trimmed = parameter.trimmingCharacters(in: .whitespaces)
                if !trimmed.isEmpty { labels.append(String(trimmed.prefix { $0 != " " && $0 != ":" })) }
                parameter = ""
                if character == ")" { break }
                continue
            }
            if "([<".contains(character) { depth += 1 }
            if ")]>".contains(character) { depth -= 1 }
            parameter.append(character)
        }
        return base + "(" + labels.map { $0 + ":" }.joined() + ")"
    }

    static func normalized(_ declaration: String) -> String {
        declaration.replacingOccurrences(of: "@NSCopying ", with: "")
    }

    /// What differs, one line each (empty: chime's module declares what Apple's does).
    func differences(from graph: SymbolGraph) -> [String] {
        var problems: [String] = []
        var matched = Set<Int>()  // indexes into graph.symbols
        let typeNames = Set(types.map(\.path))
        for type in types {
            let isProtocol = type.declarations.first?.text.hasPrefix("protocol ") == true
            for (index, (text, mark)) in type.declarations.enumerated() {
                // The first line is the type's own declaration, kept in its parent.
                let parent = index == 0 ? type.path.split(separator: ".").dropLast().joined(separator: ".") : type.path
                var wanted = text
                let optional = isProtocol && wanted.hasPrefix("optional ")
                if optional { wanted = String(wanted.dropFirst("optional ".count)) }
                let found = graph.symbols.indices.filter { graph.symbols[$0].parent == parent && graph.symbols[$0].declaration == wanted }
                guard let first = found.first(where: { !graph.symbols[$0].isDefaultImplementation }) ?? found.first else {
                    problems.append("missing: \(type.path) | \(text)")
                    continue
                }
                matched.formUnion(found)
                if optional, !found.contains(where: { graph.symbols[$0].isDefaultImplementation }) {
                    problems.append("no default implementation of the optional requirement: \(type.path) | \(text)")
                }
                let symbol = graph.symbols[first]
                if (mark == "deprecated") != symbol.deprecated {
                    problems.append("\(mark == "deprecated" ? "not deprecated as Apple's is" : "deprecated, Apple's is not"): \(type.path) | \(text)")
                }
                if (mark == "obsoleted") != symbol.obsoleted {
                    problems.append("\(mark == "obsoleted" ? "not obsoleted as Apple's is" : "obsoleted, Apple's is not"): \(type.path) | \(text)")
                }
                // Objective-C classes are imported open, with their overridable members.
                if index == 0, text.hasPrefix("class "), symbol.access != "open" {
                    problems.append("not open, as Apple's class is: \(type.path)")
                }
                if index > 0, graph.isClass(type.path), symbol.isOverridable, symbol.access != "open" {
                    problems.append("not open, as Apple's member is: \(type.path) | \(text)")
                }
                // Swift imports an Objective-C method with a completion handler as an async method
                // whose result may go unused: `try await center.requestAuthorization(options: [.alert])`
                // compiles without a warning on Apple's platforms.
                if index > 0, graph.isClass(type.path), symbol.kind == "swift.method", wanted.contains(") async"), wanted.contains(" -> "),
                   !symbol.discardable {
                    problems.append("its result cannot go unused, as an imported async method's can (@discardableResult): \(type.path) | \(text)")
                }
            }
            for supertype in type.supertypes where !graph.relations.contains(where: { $0.source == type.path && $0.target == supertype }) {
                problems.append("\(type.path) does not inherit from or conform to \(supertype), as Apple's does")
            }
        }
        let additions = Set(self.additions.map { line -> String in
            let parts = line.split(separator: "|", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            return parts[0] + " | " + parts[1]
        })
        for (index, symbol) in graph.symbols.enumerated() where symbol.declared && !matched.contains(index) {
            let key = symbol.parent + " | " + symbol.declaration
            if additions.contains(key) { continue }
            if typeNames.contains(symbol.parent), protocolMembers.contains(symbol.declaration) { continue }
            problems.append("not Apple's (nor listed as chime's addition): \(symbol.parent.isEmpty ? "-" : symbol.parent) | \(symbol.declaration)")
        }
        for addition in additions where !graph.symbols.contains(where: { $0.parent + " | " + $0.declaration == addition }) {
            problems.append("chime's addition is gone (update the list): \(addition)")
        }
        for (parent, declaration) in absent {
            if graph.symbols.contains(where: { $0.parent == parent && $0.declaration == declaration }) {
                problems.append("listed as not on Linux, but declared: \(parent) | \(declaration)")
            }
        }
        return problems
    }
}

/// A module's public symbols as swift-symbolgraph-extract reads them from the build.
struct SymbolGraph {
    struct Symbol {
        var parent: String
        var declaration: String
        var access: String
        var kind: String
        /// Declared in the module's source (not synthesized, not inherited from a protocol's extension elsewhere).
        var declared: Bool
        var deprecated = false
        var obsoleted = false
        var isDefaultImplementation = false
        /// Marked `@discardableResult` (which the declaration above leaves out, as Apple's documentation does).
        var discardable = false

        var isOverridable: Bool {
            ["swift.method", "swift.property", "swift.type.method", "swift.type.property", "swift.subscript"].contains(kind)
                && !declaration.hasPrefix("let ") && !declaration.hasPrefix("static ") && !declaration.hasPrefix("final ")
        }
    }

    struct Relation: Equatable {
        var source: String
        var target: String
    }

    var symbols: [Symbol] = []
    var relations: [Relation] = []
    var classes: Set<String> = []

    func isClass(_ path: String) -> Bool { classes.contains(path) }

    /// Runs swift-symbolgraph-extract on `module` as the tests were built, and reads what it wrote.
    static func extract(module: String) throws -> SymbolGraph {
        let modules = URL(fileURLWithPath: testBuildChimePath()).deletingLastPathComponent().appendingPathComponent("Modules").path
        let output = try makeTemporaryDirectory("chime-symbols")
        defer { try? FileManager.default.removeItem(at: output) }
        let arguments = ["-module-name", module, "-I", modules, "-target", Self.triple, "-output-dir", output.path,
                         "-minimum-access-level", "public"] + (try clangArguments())
        let tool = try Self.extractor()
        let result = try runProgram(tool, arguments.map { Array($0.utf8) }, environment: ProcessInfo.processInfo.environment, timeout: 120)
        guard result.status == 0 else {
            throw ExtractionError(message: "\(tool) failed (\(result.status)): \(result.stderr)")
        }
        let data = try Data(contentsOf: output.appendingPathComponent("\(module).symbols.json"))
        return try SymbolGraph(json: data)
    }

    /// The compiler's errors for `references` (each a line of a function of a file that imports
    /// `module` alone), one line each: empty when every reference resolves.
    static func typecheck(module: String, references: [String]) throws -> [String] {
        let modules = URL(fileURLWithPath: testBuildChimePath()).deletingLastPathComponent().appendingPathComponent("Modules").path
        let work = try makeTemporaryDirectory("chime-inherited")
        defer { try? FileManager.default.removeItem(at: work) }
        let file = work.appendingPathComponent("inherited.swift")
        try (["import \(module)", "", "func inherited() {"] + references.map { "    _ = \($0)" } + ["}", ""])
            .joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        var arguments = ["-typecheck", "-module-name", "Inherited", "-I", modules, "-target", triple, file.path] + (try clangArguments())
        arguments += ["-swift-version", "6"]
        let tool = URL(fileURLWithPath: try extractor()).deletingLastPathComponent().appendingPathComponent("swiftc").path
        let result = try runProgram(tool, arguments.map { Array($0.utf8) }, environment: ProcessInfo.processInfo.environment, timeout: 120)
        let errors = result.stderr.split(separator: "\n").filter { $0.contains(": error: ") }.map(String.init)
        if result.status != 0, errors.isEmpty { throw ExtractionError(message: "\(tool) failed (\(result.status)): \(result.stderr)") }
        return errors
    }

    /// The C modules the Swift modules import, as the build found them.
    static func clangArguments() throws -> [String] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var arguments: [String] = []
        let sources = root.appendingPathComponent("Sources")
        for name in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted() {
            for map in ["module.modulemap", "include/module.modulemap"] {
                let path = sources.appendingPathComponent(name).appendingPathComponent(map).path
                if FileManager.default.fileExists(atPath: path) { arguments += ["-Xcc", "-fmodule-map-file=" + path] }
            }
        }
        let cflags = try runProgram("/usr/bin/pkg-config", [Array("--cflags-only-I".utf8), Array("dbus-1".utf8)],
                                    environment: ProcessInfo.processInfo.environment)
        for flag in cflags.stdout.split(separator: " ") where !flag.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            arguments += ["-Xcc", flag.trimmingCharacters(in: .whitespacesAndNewlines)]
        }
        return arguments
    }

    struct ExtractionError: Error, CustomStringConvertible { var message: String; var description: String { message } }

    static var triple: String {
        #if arch(x86_64)
        "x86_64-unknown-linux-gnu"
        #elseif arch(arm64)
        "aarch64-unknown-linux-gnu"
        #else
        #error("add this architecture's target triple")
        #endif
    }

    /// swift-symbolgraph-extract: beside `swift` on PATH (the toolchain's bin folder, followed through links).
    static func extractor() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let direct = "\(directory)/swift-symbolgraph-extract"
            if FileManager.default.isExecutableFile(atPath: direct) { return direct }
            let swift = "\(directory)/swift"
            if FileManager.default.isExecutableFile(atPath: swift) {
                let real = URL(fileURLWithPath: swift).resolvingSymlinksInPath().deletingLastPathComponent()
                    .appendingPathComponent("swift-symbolgraph-extract").path
                if FileManager.default.isExecutableFile(atPath: real) { return real }
            }
        }
        throw ExtractionError(message: "swift-symbolgraph-extract is not on PATH (it comes with the Swift toolchain)")
    }

    init(json data: Data) throws {
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let list = root["symbols"] as? [[String: Any]], let links = root["relationships"] as? [[String: Any]]
        else { throw ExtractionError(message: "not a symbol graph") }
        var paths: [String: String] = [:]
        var defaults = Set<String>()
        for link in links where link["kind"] as? String == "defaultImplementationOf" {
            if let source = link["source"] as? String { defaults.insert(source) }
        }
        for item in list {
            guard let identifier = (item["identifier"] as? [String: Any])?["precise"] as? String,
                let components = item["pathComponents"] as? [String],
                let kind = (item["kind"] as? [String: Any])?["identifier"] as? String,
                let fragments = item["declarationFragments"] as? [[String: Any]]
            else { continue }
            paths[identifier] = components.joined(separator: ".")
            let spelled = fragments.compactMap { $0["spelling"] as? String }.joined()
            let declaration = spelled.replacingOccurrences(of: "override ", with: "").replacingOccurrences(of: "required ", with: "")
                .replacingOccurrences(of: "@discardableResult ", with: "")
            var symbol = Symbol(parent: components.dropLast().joined(separator: "."), declaration: AppleAPI.normalized(declaration),
                                access: item["accessLevel"] as? String ?? "", kind: kind, declared: item["location"] != nil)
            symbol.discardable = spelled.contains("@discardableResult ")
            for availability in item["availability"] as? [[String: Any]] ?? [] {
                if availability["isUnconditionallyDeprecated"] as? Bool == true || availability["deprecated"] != nil { symbol.deprecated = true }
                if availability["domain"] as? String == "Swift", availability["obsoleted"] != nil { symbol.obsoleted = true }
            }
            symbol.isDefaultImplementation = defaults.contains(identifier)
            if kind == "swift.class" { classes.insert(components.joined(separator: ".")) }
            symbols.append(symbol)
        }
        for link in links {
            guard ["conformsTo", "inheritsFrom"].contains(link["kind"] as? String ?? ""), let source = link["source"] as? String,
                let sourcePath = paths[source]
            else { continue }
            let target = (link["target"] as? String).flatMap { paths[$0] }
                ?? (link["targetFallback"] as? String)?.split(separator: ".").last.map(String.init) ?? ""
            relations.append(Relation(source: sourcePath, target: target))
        }
    }
}
