// The client's errors, typed: each D-Bus error a call can end with is one case of `SchedulerError`,
// so that the command line, the app and UserNotifications match cases, never error names. (The
// daemon's refusals end to end, through its service and the bus: AppInterfaceTests, CLITests.)
import ChimeCenter
import ChimeClient
import DBus
import Testing

@Suite struct SchedulerErrorTests {
    @Test(arguments: [
        (SchedulerInterface.invalidRequest, SchedulerRefusal.invalidRequest),
        (SchedulerInterface.neverFires, .neverFires),
        (SchedulerInterface.unknownIdentifier, .unknownIdentifier),
        (SchedulerInterface.storeFailed, .storeFailed),
        (SchedulerInterface.fromAlarmFile, .fromAlarmFile),
        (SchedulerInterface.cannotPlay, .cannotPlay),
        (SchedulerInterface.noAlarmFile, .noAlarmFile),
    ])
    func eachRefusalOfTheDaemonIsItsCase(name: ErrorName, refusal: SchedulerRefusal) {
        let error = SchedulerError(DBusError(name: name, message: "why, in the daemon's words"))
        #expect(error == .refused(refusal, DBusError(name: name, message: "why, in the daemon's words")))
        #expect(error.refusal == refusal)
        #expect(error.message == "why, in the daemon's words")
    }

    @Test func noDaemonAndNoAnswerAreTheirOwnCases() {
        for name in [ErrorName.serviceUnknown, .nameHasNoOwner] {
            let error = SchedulerError(DBusError(name: name, message: "no owner"))
            guard case .noScheduler = error else { Issue.record("\(name): \(error)"); continue }
            #expect(error.refusal == nil)
            #expect(error.message.contains("chime daemon"), "\(error.message)")
        }
        for name in [ErrorName.noReply, .timeout] {
            let error = SchedulerError(DBusError(name: name, message: "Remote peer disconnected from message bus"))
            guard case .notAnswering(let notAnswering) = error else { Issue.record("\(name): \(error)"); continue }
            #expect(notAnswering.daemonLeft)
            #expect(error.refusal == nil)
        }
    }

    @Test func theBusOwnFailuresAreFailed() {
        // This process's connection closing, a daemon without the method, a policy: the bus's, not
        // the daemon's refusal.
        for name in [ErrorName.disconnected, .unknownMethod, .accessDenied, "org.example.Other"] {
            let underlying = DBusError(name: name, message: "m")
            #expect(SchedulerError(underlying) == .failed(underlying), "\(name)")
            #expect(SchedulerError(underlying).message == "m")
        }
    }
}
