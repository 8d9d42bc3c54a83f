import Foundation

let store = ReminderStore()
await store.requestAccess()
print("authorized: \(store.isAuthorized)")
try await store.save(Reminder(id: "vitamins", title: "Take vitamins", hour: 8, minute: 0))
try await store.save(Reminder(id: "journal", title: "Write in your journal", hour: 21, minute: 30))
try await store.save(Reminder(id: "floss", title: "Floss", hour: 22, minute: 0))
store.delete(Reminder(id: "floss", title: "Floss", hour: 22, minute: 0))
print(await store.scheduledIdentifiers().joined(separator: ","))
