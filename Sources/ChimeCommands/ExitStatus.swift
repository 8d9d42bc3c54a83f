import ChimeCenter
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
    case let error as DBusError where error.name == SchedulerInterface.cannotPlay:
        ExitStatus.cannotPlay.exit("cannot play it: \(error.message)")
    case let error as DBusError where error.name == SchedulerInterface.invalidRequest || error.name == SchedulerInterface.neverFires:
        ExitStatus.usage.exit(error.message)
    case let error as DBusError where error.name == SchedulerInterface.unknownIdentifier:
        ExitStatus.unknownIdentifier.exit("\(error.message); see chime list")
    case let error as DBusError where error.name == SchedulerInterface.fromAlarmFile:
        ExitStatus.fromAlarmFile.exit(error.message)
    default:
        return
    }
}
