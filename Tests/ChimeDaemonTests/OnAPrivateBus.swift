import ChimeCenter
import ChimeClient
import TestSupport

/// A suite whose tests each run the daemon on a private bus of their own.
protocol OnAPrivateBus {
    var bus: PrivateBus { get }
}

extension OnAPrivateBus {
    /// The daemon's state directory, inside the bus's directory (removed with it).
    var state: String { bus.directory.appendingPathComponent("state").path }

    /// A client of the daemon on this bus.
    func center() throws -> UserNotificationCenter { UserNotificationCenter(connection: try bus.connect()) }
}
