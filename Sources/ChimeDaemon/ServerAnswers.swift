// What the daemon asks the notification server besides Notify: its capabilities (before an
// alarm can be rendered) and its name and version (for Settings). Each is a pending call with
// the daemon's deadline; a server that never answers holds up neither the loop nor a client.
import ChimeCenter
import DBus
import Logging
import Notifications
import Timekeeping

extension SchedulerDaemon {
    // MARK: - Capabilities

    /// Asks the server what it can do (once at a time); occurrences wait for the answer.
    func askCapabilities() {
        guard capabilitiesCall == nil else { return }
        do {
            let call = try client.beginCapabilities()
            capabilitiesCall = (call, clock.now() + Self.serverTimeout)
            try call.onCompletion { [weak self] answer in self?.capabilitiesAnswered(answer) }
        } catch {
            capabilitiesFailed(reason: "could not ask for the capabilities: \(error)")
        }
    }

    func capabilitiesAnswered(_ answer: Result<Message, any Error>) {
        guard capabilitiesCall != nil else { return }
        capabilitiesCall = nil
        do {
            let known = try NotificationClient.capabilities(from: answer)
            capabilities = known
            settingsMayBeReady()
            let ready = awaitingCapabilities
            awaitingCapabilities.removeAll()
            for (occurrence, content) in ready {
                firing(occurrence.request.identifier) { present(occurrence, content: content, capabilities: known) }
            }
        } catch is NoNotificationServerError {
            serverPresent = false
            settingsMayBeReady()
            let ready = awaitingCapabilities
            awaitingCapabilities.removeAll()
            for (occurrence, _) in ready { firing(occurrence.request.identifier) { hold(occurrence, now: clock.now()) } }
        } catch {
            capabilitiesFailed(reason: Self.describe(error))
        }
    }

    func capabilitiesFailed(reason: String) {
        settingsMayBeReady(failure: reason)
        let ready = awaitingCapabilities
        awaitingCapabilities.removeAll()
        for (occurrence, content) in ready {
            firing(occurrence.request.identifier) { failed(occurrence, content: content, reason: reason) }
        }
    }

    // MARK: - Settings, answered from what the server said

    /// Answers a `Settings` call: at once when the server's answers are known (or no server runs),
    /// otherwise as soon as they arrive or their time is up.
    func answerSettings(_ call: Message) {
        settingsWaiters.append(call)
        guard serverPresent else { return replySettings(NotificationSettings(deniedBecause: NoNotificationServerError.message)) }
        if let capabilities, let serverInformation {
            return replySettings(NotificationSettings(capabilities: capabilities, server: serverInformation, player: player))
        }
        askCapabilities()
        askServerInformation()
    }

    func replySettings(_ settings: NotificationSettings) {
        var settings = settings
        if settings.isAuthorized, !settingsWaiters.isEmpty {
            let state = currentDoNotDisturb()
            settings.doNotDisturb = state.on
            settings.doNotDisturbSource = state.description
        }
        let waiters = settingsWaiters
        settingsWaiters.removeAll()
        for call in waiters {
            if let reply = try? call.makeReturn([settings.dbusValue]) { _ = try? connection.send(reply) }
        }
    }

    /// Answers waiting `Settings` calls once both answers are in (or one of them failed).
    func settingsMayBeReady(failure: String? = nil) {
        guard !settingsWaiters.isEmpty else { return }
        if let failure { return replySettings(NotificationSettings(deniedBecause: failure)) }
        if !serverPresent { return replySettings(NotificationSettings(deniedBecause: NoNotificationServerError.message)) }
        if let capabilities, let serverInformation {
            replySettings(NotificationSettings(capabilities: capabilities, server: serverInformation, player: player))
        }
    }

    func askServerInformation() {
        guard serverInformationCall == nil, serverInformation == nil else { return }
        do {
            let call = try client.beginServerInformation()
            serverInformationCall = (call, clock.now() + Self.serverTimeout)
            try call.onCompletion { [weak self] answer in self?.serverInformationAnswered(answer) }
        } catch {
            settingsMayBeReady(failure: "could not ask the notification server: \(error)")
        }
    }

    func serverInformationAnswered(_ answer: Result<Message, any Error>) {
        guard serverInformationCall != nil else { return }
        serverInformationCall = nil
        do {
            serverInformation = try NotificationClient.serverInformation(from: answer)
            settingsMayBeReady()
            // Who the server is tells how to read its do-not-disturb: read once now, then followed.
            doNotDisturbMayHaveChanged()
        } catch is NoNotificationServerError {
            serverPresent = false
            settingsMayBeReady()
        } catch {
            settingsMayBeReady(failure: "the notification server failed: \(Self.describe(error))")
        }
    }
}
