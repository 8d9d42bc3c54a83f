// libFuzzer's entry points: the target is CHIME_FUZZ_TARGET (rule, icalendar, alarm-file, request,
// hint, png, tz-string, tzif). No main: libFuzzer's is linked in (-sanitize=fuzzer).
import FuzzTargets
#if canImport(Glibc)
import Glibc
#endif

nonisolated(unsafe) var target = FuzzTarget.rule

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    let name = getenv("CHIME_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let chosen = FuzzTarget(rawValue: name) else {
        fputs("chime-fuzz: set CHIME_FUZZ_TARGET to one of: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))\n", stderr)
        exit(2)
    }
    target = chosen
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    if let broken = target.check(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []) {
        fatalError("fuzz property broken: \(broken)")
    }
    return 0
}
