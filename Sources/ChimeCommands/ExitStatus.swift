import ChimeCenter
import ChimeClient
import DBus
import NotifyTool

/// The daemon's errors, as `ExitStatus.fail` ends the process for them (it knows the notification
/// server's and the bus's itself); installed by `Chime.main`.
func failForScheduler(_ error: any Error) {
    switch error {
    case let error as NoSchedulerError:
        ExitStatus.noDaemon.exit(error.description)
    case let error as SchedulerNotAnsweringError:
        ExitStatus.daemonFailed.exit(error.description)
    default:
        switch SchedulerRefusal.of(error) {
        case (.cannotPlay, let message)?: ExitStatus.cannotPlay.exit("cannot play it: \(message)")
        case (.invalidRequest, let message)?, (.neverFires, let message)?: ExitStatus.usage.exit(message)
        case (.unknownIdentifier, let message)?: ExitStatus.unknownIdentifier.exit("\(message); see chime list")
        case (.fromAlarmFile, let message)?: ExitStatus.fromAlarmFile.exit(message)
        default: return
        }
    }
}
