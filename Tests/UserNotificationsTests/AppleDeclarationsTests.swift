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
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let modules = URL(fileURLWithPath: chimeBinaryPath()).deletingLastPathComponent().appendingPathComponent("Modules").path
        let output = try makeTemporaryDirectory("chime-symbols")
        defer { try? FileManager.default.removeItem(at: output) }
        var arguments = ["-module-name", module, "-I", modules, "-target", Self.triple, "-output-dir", output.path,
                         "-minimum-access-level", "public"]
        // The C modules the Swift modules import, as the build found them.
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
        let tool = try Self.extractor()
        let result = try runProgram(tool, arguments.map { Array($0.utf8) }, environment: ProcessInfo.processInfo.environment, timeout: 120)
        guard result.status == 0 else {
            throw ExtractionError(message: "\(tool) failed (\(result.status)): \(result.stderr)")
        }
        let data = try Data(contentsOf: output.appendingPathComponent("\(module).symbols.json"))
        return try SymbolGraph(json: data)
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
            let declaration = fragments.compactMap { $0["spelling"] as? String }.joined()
                .replacingOccurrences(of: "override ", with: "").replacingOccurrences(of: "required ", with: "")
            var symbol = Symbol(parent: components.dropLast().joined(separator: "."), declaration: AppleAPI.normalized(declaration),
                                access: item["accessLevel"] as? String ?? "", kind: kind, declared: item["location"] != nil)
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
