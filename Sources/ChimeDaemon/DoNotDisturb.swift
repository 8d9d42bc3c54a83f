// Do-not-disturb, read from the running notification server where it tells (no server announces it
// through the notification spec: each has its own way), and each alarm's policy while it is on:
//  - break-through (the default): sent as critical, which GNOME Shell's message tray lets through
//    with banners off and Plasma shows by default; swaync and mako decide by their configuration;
//    dunst 1.9 holds every popup while paused, critical ones too, so there the sound (chime plays
//    it: dunst plays none) rings and the popup shows at resume;
//  - defer: held (durably, like an alarm waiting for a server) until do-not-disturb ends, then
//    shown marked "Late: due at 07:00";
//  - silent: recorded as delivered (`chime delivered`), no popup, no sound.
//
// The state is read when an alarm that cares is due, and again whenever the server announces a
// change (dunst's and Plasma's PropertiesChanged, swaync's Subscribe signals; mako's, where a newer
// mako announces its Modes). GNOME Shell's `show-banners` (read with `gsettings`) and mako 1.7's
// modes announce nothing to us, so while an alarm is deferred the server is asked again every
// `doNotDisturbRecheck`. The compatibility matrix (make test-desktops) switches each server's own
// do-not-disturb and measures how soon a deferred alarm comes.
import ChimeCenter
import DBus
import Logging
import Notifications
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// What the server says of its do-not-disturb.
struct DoNotDisturbState: Equatable {
    /// nil: this server does not say (or could not be asked).
    var on: Bool?
    /// "dunst is paused", "Plasma's do-not-disturb is on", "the server does not say".
    var description: String
}

extension SchedulerDaemon {
    /// How long a read of the server's state may take before it counts as "does not say".
    static let doNotDisturbTimeout = TimeSpan.milliseconds(1000)
    /// How often a deferred alarm's server is asked again when it announces no changes.
    static let doNotDisturbRecheck = TimeSpan.seconds(30)

    /// Reads the running server's do-not-disturb now.
    func readDoNotDisturb() -> DoNotDisturbState {
        guard serverPresent else { return DoNotDisturbState(on: nil, description: "no notification server") }
        // The server's name, as asked (without waiting) when it appeared: a server that does not
        // answer GetServerInformation is not asked anything else, and holds nothing up.
        guard let name = serverInformation?.name else {
            askServerInformation()
            return DoNotDisturbState(on: nil, description: "the server has not said who it is")
        }
        let timeout = CallTimeout.milliseconds(Int32(Self.doNotDisturbTimeout.milliseconds))
        func property(_ path: ObjectPath, _ interface: String, _ property: String) -> Value? {
            guard let reply = try? connection.call(
                destination: NotificationClient.busName, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
                arguments: [.string(interface), .string(property)], timeout: timeout)
            else { return nil }
            return reply.first?.unwrappingVariants
        }
        switch ServerWays.Known(rawValue: name) {
        case .dunst?:
            guard case .boolean(let paused)? = property(NotificationClient.objectPath, "org.dunstproject.cmd0", "paused") else { break }
            if paused, case .uint32(let level)? = property(NotificationClient.objectPath, "org.dunstproject.cmd0", "pauseLevel") {
                return DoNotDisturbState(on: true, description: "dunst is paused (pause level \(level))")
            }
            return DoNotDisturbState(on: paused, description: paused ? "dunst is paused" : "dunst is not paused")
        case .plasma?:
            guard case .boolean(let inhibited)? = property(NotificationClient.objectPath, "org.freedesktop.Notifications", "Inhibited") else { break }
            return DoNotDisturbState(on: inhibited, description: "Plasma's do-not-disturb is \(inhibited ? "on" : "off")")
        case .swaync?:
            guard let reply = try? connection.call(
                destination: "org.erikreider.swaync.cc", path: "/org/erikreider/swaync/cc", interface: "org.erikreider.swaync.cc",
                member: "GetDnd", timeout: timeout),
                case .boolean(let on)? = reply.first
            else { break }
            return DoNotDisturbState(on: on, description: "swaync's do-not-disturb is \(on ? "on" : "off")")
        case .mako?:
            var modes: [String]?
            if let value = property("/fr/emersion/Mako", "fr.emersion.Mako", "Modes") {
                modes = value.arrayElements?.compactMap(\Value.stringValue)
            } else if let reply = try? connection.call(
                destination: NotificationClient.busName, path: "/fr/emersion/Mako", interface: "fr.emersion.Mako", member: "ListModes",
                timeout: timeout) {
                modes = reply.first?.arrayElements?.compactMap(\Value.stringValue)
            }
            guard let modes else { break }
            let on = modes.contains("do-not-disturb")
            return DoNotDisturbState(on: on, description: "mako's do-not-disturb mode is \(on ? "on" : "off") (modes: \(modes.joined(separator: ", ")))")
        case .gnomeShell?:
            guard let banners = gsettingsBoolean("org.gnome.desktop.notifications", "show-banners") else {
                return DoNotDisturbState(on: nil, description: "GNOME Shell's show-banners could not be read (gsettings)")
            }
            return DoNotDisturbState(on: !banners, description: "GNOME's do-not-disturb is \(banners ? "off" : "on") (show-banners \(banners))")
        default:
            return DoNotDisturbState(on: nil, description: name.isEmpty ? "the server does not say" : "\(name) does not say")
        }
        return DoNotDisturbState(on: nil, description: "\(name) did not answer when asked")
    }

    /// `gsettings get SCHEMA KEY` for a boolean (nil: no gsettings, or no such key).
    func gsettingsBoolean(_ schema: String, _ key: String) -> Bool? {
        guard let child = try? spawnChild(["gsettings", "get", schema, key], captureOutput: true, outputLimit: 64,
                                          deadline: clock.now() + Self.doNotDisturbTimeout)
        else { return nil }
        // Waits here: gsettings reads the dconf database and answers within milliseconds.
        var status: Int32 = 0
        let deadline = clock.now() + Self.doNotDisturbTimeout
        while child.output >= 0, clock.now() < deadline {
            var pollFD = pollfd(fd: child.output, events: Int16(POLLIN), revents: 0)
            _ = poll(&pollFD, 1, 50)
            child.readOutput()
        }
        if child.output >= 0 { child.kill() }
        _ = waitpid(child.pid, &status, 0)
        child.waitStatus = status
        let text = String(decoding: child.collected, as: UTF8.self).trimmingWhitespace()
        return text == "true" ? true : text == "false" ? false : nil
    }

    /// Whether to show `occurrence` now, given its policy and the server's do-not-disturb: nil
    /// when it is shown as it is; otherwise what to do instead.
    enum DoNotDisturbAction { case show(urgency: Urgency), hold, silence }

    /// The server's do-not-disturb now. Servers that announce their changes are not asked again: the
    /// state was read when the server came and follows its signals. The others (GNOME's setting,
    /// mako 1.7) are read now.
    func currentDoNotDisturb() -> DoNotDisturbState {
        if let known = doNotDisturb, announcesDoNotDisturb { return known }
        let state = readDoNotDisturb()
        doNotDisturb = state
        return state
    }

    func doNotDisturbAction(for content: NotificationContent) -> DoNotDisturbAction? {
        let policy = content.doNotDisturb ?? .breakThrough
        // A critical alarm that breaks through needs no question asked.
        if policy == .breakThrough, content.urgency == .critical { return nil }
        guard currentDoNotDisturb().on == true else { return nil }
        switch policy {
        case .breakThrough: return .show(urgency: .critical)
        case .defer: return .hold
        case .silent: return .silence
        }
    }

    /// Follows the server's announcements of a change (subscribed once; the signals are believed
    /// only from the server's current owner).
    func followDoNotDisturb() throws {
        // dunst announces every property (how many popups it shows, too): only these matter.
        let properties: Set<String> = ["paused", "pauseLevel", "Inhibited", "Modes"]
        let propertiesChanged: (Message) -> Void = { [weak self] message in
            guard let arguments = try? message.arguments(), arguments.count == 3 else { return }
            let changed = (arguments[1].dictionaryEntries ?? []).compactMap(\.key.stringValue)
            let invalidated = arguments[2].arrayElements?.compactMap(\Value.stringValue) ?? []
            if !properties.isDisjoint(with: changed + invalidated) { self?.doNotDisturbMayHaveChanged() }
        }
        for path: ObjectPath in [NotificationClient.objectPath, "/fr/emersion/Mako"] {
            doNotDisturbSubscriptions.append(try connection.subscribe(
                MatchRule(sender: NotificationClient.busName, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                          path: path), handler: propertiesChanged))
        }
        let changed: (Message) -> Void = { [weak self] _ in self?.doNotDisturbMayHaveChanged() }
        for member: MemberName in ["Subscribe", "SubscribeV2"] {
            doNotDisturbSubscriptions.append(try connection.subscribe(
                MatchRule(sender: "org.erikreider.swaync.cc", interface: "org.erikreider.swaync.cc", member: member,
                          path: "/org/erikreider/swaync/cc"), handler: changed))
        }
    }

    /// Whether the running server announces a change of its do-not-disturb (dunst and Plasma through
    /// PropertiesChanged, swaync through its Subscribe signals).
    var announcesDoNotDisturb: Bool {
        switch ServerWays.Known(rawValue: serverInformation?.name ?? "") {
        case .dunst?, .plasma?, .swaync?: true
        default: false
        }
    }

    /// The server may have turned do-not-disturb off: deferred alarms are shown once it has.
    func doNotDisturbMayHaveChanged() {
        let state = readDoNotDisturb()
        if state != doNotDisturb { logger.info("do-not-disturb: \(state.description)") }
        doNotDisturb = state
        lastDoNotDisturbRead = clock.now()
        if state.on != true, !deferred.isEmpty {
            deferred.removeAll()
            if !waiting.isEmpty { showHeld() }
        }
    }

    /// When deferred alarms' server is asked again (servers that announce no changes).
    var nextDoNotDisturbRecheck: Instant? {
        guard !deferred.isEmpty else { return nil }
        return (lastDoNotDisturbRead ?? clock.now()) + Self.doNotDisturbRecheck
    }

    /// What `chime status` says of do-not-disturb.
    var doNotDisturbStatus: String {
        let state = currentDoNotDisturb()
        guard state.on == true else {
            return state.on == false ? "off (\(state.description))" : "unknown: \(state.description)"
        }
        var text = "on (\(state.description)): alarms break through as critical"
        if ServerWays.Known(rawValue: serverInformation?.name ?? "") == .dunst {
            text += " (dunst holds even those until it resumes; chime still plays their sound)"
        }
        text += ", --dnd defer ones wait until it ends, --dnd silent ones are only recorded"
        if !deferred.isEmpty { text += "; \(deferred.count) alarm(s) deferred" }
        return text
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while s.first?.isWhitespace == true { s.removeFirst() }
        while s.last?.isWhitespace == true { s.removeLast() }
        return String(s)
    }
}
