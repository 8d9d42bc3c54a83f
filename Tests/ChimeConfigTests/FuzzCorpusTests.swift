import Foundation
import FuzzTargets
import Testing
import TestSupport

/// Every fuzz target over its corpus (Fuzz/corpus: the seeds and every finding kept as a
/// regression input), through the same functions `make fuzz` runs under libFuzzer, without
/// mutating: each input keeps its target's property.
@Suite struct FuzzCorpusTests {
    @Test(arguments: FuzzTarget.allCases)
    func everyInputKeepsItsTargetsProperty(_ target: FuzzTarget) throws {
        // Sounds are decoded by chime's own decoder, as the daemon decodes them.
        FuzzTarget.soundDecoder = [chimeBinaryPath(), "daemon"]
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let directory = root.appendingPathComponent("Fuzz/corpus/\(target.rawValue)")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(!names.isEmpty, "no corpus for \(target.rawValue)")
        for name in names {
            let bytes = try [UInt8](Data(contentsOf: directory.appendingPathComponent(name)))
            if let broken = target.check(bytes) { Issue.record("\(target.rawValue)/\(name): \(broken)") }
        }
    }
}
