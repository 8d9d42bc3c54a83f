/// chime's version: the one place it is written down.
public let chimeVersion = "0.2.0"

extension SchedulerInterface {
    /// The version of the daemon that answers (`Status`).
    public static var version: String { chimeVersion }
}
