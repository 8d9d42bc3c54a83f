// Sounds: the default, a named file, the critical ones and their volume.
import Foundation
import UserNotifications

let center = UNUserNotificationCenter.current()
let sounds: [(String, UNNotificationSound)] = [
    ("default", .default),
    ("named", UNNotificationSound(named: UNNotificationSoundName(rawValue: "chime.caf"))),
    ("critical", .defaultCritical),
    ("critical-quiet", .defaultCriticalSound(withAudioVolume: 0.3)),
    ("critical-named", .criticalSoundNamed(UNNotificationSoundName("siren.wav"), withAudioVolume: 1.0)),
]
for (name, sound) in sounds {
    let content = UNMutableNotificationContent()
    content.title = "Sound: \(name)"
    content.sound = sound
    content.interruptionLevel = name.hasPrefix("critical") ? .critical : .active
    center.add(UNNotificationRequest(identifier: name, content: content,
                                     trigger: UNTimeIntervalNotificationTrigger(timeInterval: 86_400, repeats: false)))
}
center.getPendingNotificationRequests { requests in
    let critical = requests.filter { $0.content.interruptionLevel == .critical }.count
    print("pending \(requests.count), critical \(critical)")
    exit(0)
}
dispatchMain()
