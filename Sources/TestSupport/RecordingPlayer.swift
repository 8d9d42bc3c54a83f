import Foundation

/// A sound player program the daemon finds first on its PATH (`canberra-gtk-play`), written by the
/// test as a shell script that notes what it was asked to play into `log`: the daemon's own sound
/// path (no sound server here) is then read back line by line.
public struct RecordingPlayer: Sendable {
    /// Where the player lives (put first on the daemon's PATH: `environment`).
    public let directory: URL
    /// What the script writes (`$LOG` in it).
    public var log: URL { directory.appendingPathComponent("plays.log") }

    /// A folder for it in `bus`'s; the script is installed with `install`.
    public init(in bus: PrivateBus) throws {
        directory = bus.directory.appendingPathComponent("player")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// The player's script: `body` after the shebang, `$LOG` standing for the log's path.
    public func install(_ body: String) throws {
        try installExecutable("#!/bin/sh\nLOG='\(log.path)'\n" + body + "\n", at: directory.appendingPathComponent("canberra-gtk-play").path)
    }

    /// The log's lines so far.
    public func lines() -> [String] {
        ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// The daemon's environment: the player first on its PATH.
    public var environment: [String: String] {
        ["PATH": directory.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]
    }
}
