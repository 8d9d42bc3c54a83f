import DBus
import Foundation

/// Where the built `chime` binary is: `CHIME_BINARY`, or beside the test bundle.
public func chimeBinaryPath() -> String {
    if let path = ProcessInfo.processInfo.environment["CHIME_BINARY"] { return path }
    // The test binary sits beside the products it was built with.
    let testBinary = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var directory = URL(fileURLWithPath: testBinary).deletingLastPathComponent()
    if directory.lastPathComponent.hasSuffix(".xctest") { directory = directory.deletingLastPathComponent() }
    return directory.appendingPathComponent("chime").path
}

/// Runs the built `chime` with `arguments` on the bus of `environment`.
public func runChime(
    _ arguments: [String], environment: [String: String], timeout: TimeInterval = 30,
    whileRunning: ((Int32) -> Void)? = nil
) throws -> CommandResult {
    try runProgram(chimeBinaryPath(), arguments.map { Array($0.utf8) }, environment: environment, timeout: timeout,
                   whileRunning: whileRunning)
}
