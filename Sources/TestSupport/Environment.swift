import DBus
import Foundation

/// Where the built `chime` binary is: `CHIME_BINARY`, or beside the test bundle.
public func chimeBinaryPath() -> String {
    if let path = ProcessInfo.processInfo.environment["CHIME_BINARY"] { return path }
    let bundle = Bundle.main.bundleURL.deletingLastPathComponent()
    for candidate in [bundle.appendingPathComponent("chime"), bundle.deletingLastPathComponent().appendingPathComponent("chime")]
    where FileManager.default.isExecutableFile(atPath: candidate.path) {
        return candidate.path
    }
    return bundle.appendingPathComponent("chime").path
}

/// Runs the built `chime` with `arguments` on the bus of `environment`.
public func runChime(
    _ arguments: [String], environment: [String: String], timeout: TimeInterval = 30,
    whileRunning: ((Int32) -> Void)? = nil
) throws -> CommandResult {
    try runProgram(chimeBinaryPath(), arguments.map { Array($0.utf8) }, environment: environment, timeout: timeout,
                   whileRunning: whileRunning)
}
