import Notifications

extension SchedulerInterface {
    /// The version of the daemon that answers (`Status`).
    public static var version: String { chimeVersion }
}
