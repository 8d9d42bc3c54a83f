import ChimeCenter
import ChimeClient
import DBus
import NotifyTool

/// The daemon's errors, as `ExitStatus.fail` ends the process for them (it knows the notification
/// server's and the bus's itself); installed by `Chime.main`.
func failForScheduler(_ error: any Error) {
    guard let error = error as? SchedulerError else { return }
    switch error {
    case .noScheduler(let error): ExitStatus.noDaemon.exit(error.description)
    case .notAnswering(let error): ExitStatus.daemonFailed.exit(error.description)
    case .refused(.cannotPlay, let error): ExitStatus.cannotPlay.exit("cannot play it: \(error.message)")
    case .refused(.invalidRequest, let error), .refused(.neverFires, let error): ExitStatus.usage.exit(error.message)
    case .refused(.unknownIdentifier, let error): ExitStatus.unknownIdentifier.exit("\(error.message); see chime list")
    case .refused(.fromAlarmFile, let error): ExitStatus.fromAlarmFile.exit(error.message)
    // (The store's failure, no alarm file, and the bus's own errors: as the bus's.)
    case .refused(.storeFailed, let error), .refused(.noAlarmFile, let error), .failed(let error): ExitStatus.fail(error)
    case .unsendable(let text): ExitStatus.invalidInput.exit(text)
    }
}
