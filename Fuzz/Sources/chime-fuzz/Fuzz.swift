// libFuzzer driven from here (LLVMFuzzerRunDriver, linked in by -sanitize=fuzzer): the target is
// CHIME_FUZZ_TARGET (rule, icalendar, alarm-file, request, hint, png, tz-string, tzif, sound); the
// arguments are libFuzzer's (corpus directories, -max_total_time=, ...). Built with
// -parse-as-library: the entry point is `chime_fuzz_main`, which SwiftPM links as the program's main.
import FuzzTargets
#if canImport(Glibc)
import Glibc
#endif

@_silgen_name("LLVMFuzzerRunDriver")
func runDriver(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
               _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

nonisolated(unsafe) var target = FuzzTarget.rule

@_cdecl("chime_fuzz_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    // The sound target's decoder is this program too: `chime-fuzz daemon --decode-sound PATH`.
    let given = (0..<Int(argc)).map { argv?[$0].map { String(cString: $0) } ?? "" }
    if given.count >= 4, given[1] == "daemon", given[2] == "--decode-sound" {
        return FuzzTarget.runSoundDecoder(path: given[3], looping: given.dropFirst(4).contains("--loop"))
    }
    FuzzTarget.soundDecoder = ["/proc/self/exe", "daemon"]
    let name = getenv("CHIME_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let chosen = FuzzTarget(rawValue: name) else {
        let message = Array("chime-fuzz: set CHIME_FUZZ_TARGET to one of: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))\n".utf8)
        _ = message.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        return 2
    }
    target = chosen
    var count = argc
    var arguments = argv
    return runDriver(&count, &arguments) { data, size in testOneInput(data, size) }
}

/// One input (also libFuzzer's own entry point, which its archive's main refers to).
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    if let broken = target.check(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []) {
        fatalError("fuzz property broken: \(broken)")
    }
    return 0
}
