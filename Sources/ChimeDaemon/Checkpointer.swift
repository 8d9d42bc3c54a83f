// The store's write-ahead log is copied back into the database (a checkpoint) on a thread of its
// own, never in the loop: SQLite's own checkpoint runs inside the commit that grows the log past
// 1,000 pages, and takes that commit from a millisecond to 10-60 ms (it writes the pages back and
// syncs the file twice). Applying a big calendar's 100,000 alarms grows the log a hundred times.
//
// The daemon's connection tells the checkpointer after each commit how big the log is (SQLite's
// WAL hook, which replaces the automatic checkpoint); past the threshold, the checkpointer's own
// connection runs a PASSIVE checkpoint (it never waits for, or blocks, the daemon's writes: SQLite
// lets one connection write while another copies what was committed before). `makeDurable`
// (before the machine sleeps) still checkpoints in full on the daemon's own connection.
import Dispatch
import Synchronization

final class Checkpointer: Sendable {
    private let path: String
    private let queue = DispatchQueue(label: "chime.checkpoint", qos: .utility)
    /// A checkpoint is asked for and has not started yet (asked again meanwhile, it runs once).
    private let asked = Atomic<Bool>(false)
    /// Checkpoints run (for tests and the log).
    let runs = Atomic<Int>(0)
    /// The log's size, in pages, past which it is copied back (SQLite's own default).
    static let threshold: Int32 = 1000

    init(path: String) {
        self.path = path
    }

    /// After a commit left the log `pages` long.
    func committed(pages: Int32) {
        guard pages >= Self.threshold else { return }
        guard asked.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        queue.async { [self] in
            _ = asked.exchange(false, ordering: .acquiringAndReleasing)
            // A connection for this one checkpoint: the thread keeps nothing open between them
            // (a big reload asks about once a second; opening is a fraction of a millisecond).
            guard let database = try? Database(path: path, create: false) else { return }
            try? database.executeScript("PRAGMA wal_checkpoint(PASSIVE);")
            database.close()
            runs.add(1, ordering: .relaxed)
        }
    }
}
