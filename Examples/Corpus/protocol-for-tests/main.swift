import Foundation

let scheduler = Scheduler()
try await scheduler.scheduleCheckIn(after: 4 * 3600)
print("pending: \(await scheduler.count())")
