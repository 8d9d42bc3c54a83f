// UNUserNotificationCenter on Linux: a client of chime's scheduler daemon (org.chime.Scheduler1 on
// the session bus), so requests outlive the program and survive reboots, and the daemon shows them
// whether or not the program still runs.
import ChimeCenter
import ChimeClient
import DBus
import Foundation
import Notifications
import Timekeeping

/// What the program hears while it runs. Every method is optional, as on Apple (here each has a
/// default implementation).
///
/// Called on the main queue, as Apple calls them in an app: a command-line program keeps the main
/// queue running to hear them (an `async` main, `dispatchMain()`, or `RunLoop.main.run()`).
public protocol UNUserNotificationCenterDelegate: NSObjectProtocol {
    /// A notification of this program was shown while it runs. The daemon has already shown it (it
    /// shows them whether or not the program runs): an answer without `.banner`, `.alert` or
    /// `.list` takes the popup down at once. `.sound` and `.badge` change nothing here.
    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification,
                                withCompletionHandler completionHandler: @escaping @Sendable (UNNotificationPresentationOptions) -> Void)
    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification) async
        -> UNNotificationPresentationOptions
    /// The user pressed one of its buttons (`actionIdentifier`), clicked the popup
    /// (`UNNotificationDefaultActionIdentifier`, where the server reports clicks), or closed it
    /// (`UNNotificationDismissActionIdentifier`, for categories with `.customDismissAction`).
    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
                                withCompletionHandler completionHandler: @escaping @Sendable () -> Void)
    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async
    /// Never called: the Linux desktop has no per-app notification settings to open from.
    func userNotificationCenter(_ center: UNUserNotificationCenter, openSettingsFor notification: UNNotification?)
}

extension UNUserNotificationCenterDelegate {
    public func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification,
                                       withCompletionHandler completionHandler: @escaping @Sendable (UNNotificationPresentationOptions) -> Void) {
        nonisolated(unsafe) let delegate: any UNUserNotificationCenterDelegate = self
        Task { completionHandler(await delegate.userNotificationCenter(center, willPresent: notification)) }
    }

    /// Without an answer, the popup stays as the daemon showed it.
    public func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification) async
        -> UNNotificationPresentationOptions {
        [.banner, .list, .sound]
    }

    public func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
                                       withCompletionHandler completionHandler: @escaping @Sendable () -> Void) {
        nonisolated(unsafe) let delegate: any UNUserNotificationCenterDelegate = self
        Task {
            await delegate.userNotificationCenter(center, didReceive: response)
            completionHandler()
        }
    }

    public func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {}

    public func userNotificationCenter(_ center: UNUserNotificationCenter, openSettingsFor notification: UNNotification?) {}
}

/// Schedules, lists and removes this program's notifications, as on Apple's platforms.
///
/// - Requests are kept by chime's daemon (`chime daemon`, started through D-Bus activation where
///   chime is installed): they fire whether or not the program runs, and survive reboots. When no
///   daemon can be reached, the methods fail with `SchedulerError.noScheduler`, which says how to start one.
/// - A program sees only its own requests: they are kept as `APP/IDENTIFIER`, where APP is
///   `$CHIME_APPLICATION_ID`, else `Bundle.main.bundleIdentifier`, else the program's name (`chime
///   list` shows them so, labelled with APP). Removing all removes only the program's own.
/// - Completion handlers are called on a background queue (one serial queue per center), as Apple
///   says of its own; the `async` forms may be awaited anywhere. Delegate methods are called on the
///   main queue. One center carries out its calls in the order they are made (a remove, then a
///   listing, sees the remove).
/// - A call without a completion handler (`add(request)`, the removes) has handed its work to the
///   daemon when it returns, so a program may exit right after it: nothing is lost to an exit.
open class UNUserNotificationCenter: NSObject, @unchecked Sendable {
    nonisolated(unsafe) private static var shared: UNUserNotificationCenter?
    private static let sharedLock = NSLock()

    /// The program's center.
    open class func current() -> UNUserNotificationCenter {
        sharedLock.withLock {
            if let shared { return shared }
            let center = UNUserNotificationCenter(applicationIdentifier: defaultApplicationIdentifier)
            shared = center
            return center
        }
    }

    /// `$CHIME_APPLICATION_ID`, else the bundle identifier, else the program's name (not in Apple's API).
    public static var defaultApplicationIdentifier: String {
        if let id = ProcessInfo.processInfo.environment["CHIME_APPLICATION_ID"], !id.isEmpty { return id }
        return Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
    }

    /// The name the program's requests are kept under (not in Apple's API).
    public let applicationIdentifier: String
    /// Notification service and content extensions do not exist on Linux.
    open var supportsContentExtensions: Bool { false }

    /// Hears what happens to the program's notifications while it runs (held weakly, as on Apple).
    open weak var delegate: (any UNUserNotificationCenterDelegate)? {
        didSet { if delegate != nil { startListening() } }
    }

    let queue: DispatchQueue
    /// Marks `queue`, so that a call made on it (from a completion handler) runs in place.
    private let queueKey = DispatchSpecificKey<ObjectIdentifier>()
    private var connection: Connection?
    private var categories: Set<UNNotificationCategory> = []
    /// Requests this process added, by their identifier in the daemon (for the delegate's callbacks).
    private var added: [String: UNNotificationRequest] = [:]
    private var listener: Thread?
    private let state = NSLock()

    /// The bus the daemon is on: the session bus, unless a center was made for another.
    let bus: Bus

    /// A center for the program named `applicationIdentifier` (`current()` is the usual one), on the
    /// session bus or the bus at `busAddress` (not in Apple's API).
    public init(applicationIdentifier: String, busAddress: String? = nil) {
        self.applicationIdentifier = applicationIdentifier
        bus = busAddress.map { .address($0) } ?? .session
        queue = DispatchQueue(label: "chime.UserNotifications.\(applicationIdentifier)")
        super.init()
        queue.setSpecific(key: queueKey, value: ObjectIdentifier(self))
    }

    /// Runs `work` on the center's queue, in order with every call before it, and returns when it is
    /// done: a call without a completion handler has reached the daemon when it returns. Made from
    /// the queue itself (a completion handler), it runs in place. The wait is bounded (two of the
    /// daemon's 30 s timeouts): a caller the queue waits on (a handler blocked in
    /// `DispatchQueue.main.sync` while the main thread calls here) is not held forever; the work
    /// then runs when the queue is free.
    private func handOver(_ doing: String, _ work: @escaping @Sendable () -> Void) {
        if DispatchQueue.getSpecific(key: queueKey) == ObjectIdentifier(self) {
            work()
            return
        }
        let done = DispatchSemaphore(value: 0)
        queue.async {
            work()
            done.signal()
        }
        if done.wait(timeout: .now() + .seconds(65)) == .timedOut {
            report(doing, "still waits for the center's queue after 65 s; it goes ahead when the queue is free")
        }
    }

    /// What became of a call without a completion handler that failed (or waits): said on standard
    /// error, in one line, since no one else can hear of it (Apple's platforms write such failures to
    /// the system log).
    private func report(_ doing: String, _ outcome: String) {
        FileHandle.standardError.write(Data("UserNotifications: \(doing) \(outcome)\n".utf8))
    }

    // MARK: - Authorization and settings

    /// Grants what a running notification server can do; no one is asked. Not granted (with
    /// `UNError.Code.notificationsNotAllowed` saying why) when no server runs.
    open func requestAuthorization(options: UNAuthorizationOptions = [],
                                   completionHandler: @escaping @Sendable (Bool, (any Error)?) -> Void) {
        getNotificationSettings { settings in
            if settings.authorizationStatus == .authorized {
                completionHandler(true, nil)
            } else {
                let reason: String = if case .denied(let why) = settings.chime.authorizationStatus { why } else { "not authorized" }
                completionHandler(false, UNError(.notificationsNotAllowed, reason))
            }
        }
    }

    @discardableResult
    open func requestAuthorization(options: UNAuthorizationOptions = []) async throws -> Bool {
        try await withCheckedThrowingContinuation { continuation in
            requestAuthorization(options: options) { granted, error in
                if let error, !granted, (error as? UNError)?.code != .notificationsNotAllowed {
                    continuation.resume(throwing: error)
                } else {
                    continuation.resume(returning: granted)
                }
            }
        }
    }

    /// What notifications can do here, from the server that runs now (asked directly: no daemon needed).
    open func getNotificationSettings(completionHandler: @escaping @Sendable (UNNotificationSettings) -> Void) {
        queue.async {
            do {
                let settings = try ChimeCenter.notificationSettings(connection: try self.openConnection())
                var withFocus = settings
                if settings.isAuthorized, let status = try? UserNotificationCenter(connection: try self.openConnection()).notificationSettings() {
                    withFocus.doNotDisturb = status.doNotDisturb
                    withFocus.doNotDisturbSource = status.doNotDisturbSource
                }
                completionHandler(UNNotificationSettings(withFocus))
            } catch {
                completionHandler(UNNotificationSettings(NotificationSettings(deniedBecause: "\(error)")))
            }
        }
    }

    @discardableResult
    open func notificationSettings() async -> UNNotificationSettings {
        await withCheckedContinuation { continuation in getNotificationSettings { continuation.resume(returning: $0) } }
    }

    // MARK: - Adding and listing

    /// Adds (or replaces) a request; the handler gets nil once the daemon has it on disk.
    ///
    /// Without a handler, the request is with the daemon when this returns (or its failure said on
    /// standard error): a program may exit right after. With one, this returns at once and the
    /// handler is called on the center's queue.
    open func add(_ request: UNNotificationRequest, withCompletionHandler completionHandler: (@Sendable ((any Error)?) -> Void)? = nil) {
        guard let completionHandler else {
            let doing = "adding the request \"\(request.identifier)\""
            handOver(doing) {
                if let error = self.send(request) { self.report(doing, "failed: \(error)") }
            }
            return
        }
        queue.async { completionHandler(self.send(request)) }
    }

    /// Hands `request` to the daemon, on the queue: nil once it has it, else what went wrong.
    private func send(_ request: UNNotificationRequest) -> (any Error)? {
        do {
            let chime = try chimeRequest(request)
            _ = try daemon().add(chime)
            state.withLock { added[chime.identifier] = request }
            return nil
        } catch {
            return Self.translated(error)
        }
    }

    open func add(_ request: UNNotificationRequest) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            add(request) { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }

    /// The program's pending requests, soonest first.
    open func getPendingNotificationRequests(completionHandler: @escaping @Sendable ([UNNotificationRequest]) -> Void) {
        queue.async { completionHandler((try? self.pending()) ?? []) }
    }

    @discardableResult
    open func pendingNotificationRequests() async -> [UNNotificationRequest] {
        await withCheckedContinuation { continuation in
            getPendingNotificationRequests { continuation.resume(returning: $0) }
        }
    }

    /// Removes the program's pending requests with these identifiers; done when it returns.
    open func removePendingNotificationRequests(withIdentifiers identifiers: [String]) {
        handOver("removing pending requests") {
            do { _ = try self.daemon().removePendingNotificationRequests(withIdentifiers: identifiers.map(self.daemonIdentifier)) } catch {
                self.report("removing pending requests", "failed: \(error)")
            }
        }
    }

    /// Removes the program's pending requests (no one else's); done when it returns.
    open func removeAllPendingNotificationRequests() {
        handOver("removing all pending requests") {
            do {
                let center = try self.daemon()
                let mine = try center.pendingSummaries().map(\.identifier).filter(self.isMine)
                if !mine.isEmpty { _ = try center.removePendingNotificationRequests(withIdentifiers: mine) }
            } catch {
                self.report("removing all pending requests", "failed: \(error)")
            }
        }
    }

    /// The program's notifications still on screen (or in the server's list).
    open func getDeliveredNotifications(completionHandler: @escaping @Sendable ([UNNotification]) -> Void) {
        queue.async { completionHandler((try? self.delivered()) ?? []) }
    }

    @discardableResult
    open func deliveredNotifications() async -> [UNNotification] {
        await withCheckedContinuation { continuation in
            getDeliveredNotifications { continuation.resume(returning: $0) }
        }
    }

    /// Takes these notifications of the program down; done when it returns.
    open func removeDeliveredNotifications(withIdentifiers identifiers: [String]) {
        handOver("removing delivered notifications") {
            do { try self.daemon().removeDeliveredNotifications(withIdentifiers: identifiers.map(self.daemonIdentifier)) } catch {
                self.report("removing delivered notifications", "failed: \(error)")
            }
        }
    }

    /// Takes every notification of the program down; done when it returns.
    open func removeAllDeliveredNotifications() {
        handOver("removing all delivered notifications") {
            do {
                let center = try self.daemon()
                let mine = try center.deliveredNotifications().map(\.identifier).filter(self.isMine)
                if !mine.isEmpty { try center.removeDeliveredNotifications(withIdentifiers: mine) }
            } catch {
                self.report("removing all delivered notifications", "failed: \(error)")
            }
        }
    }

    // MARK: - Categories and badges

    /// The categories whose actions the program's notifications show (kept by this process, as Apple
    /// keeps them per launch: set them at start).
    open func setNotificationCategories(_ categories: Set<UNNotificationCategory>) {
        state.withLock { self.categories = categories }
    }

    open func getNotificationCategories(completionHandler: @escaping @Sendable (Set<UNNotificationCategory>) -> Void) {
        let categories = state.withLock { self.categories }
        queue.async { completionHandler(categories) }
    }

    @discardableResult
    open func notificationCategories() async -> Set<UNNotificationCategory> {
        state.withLock { categories }
    }

    /// App badges do not exist on the Linux desktop: the handler gets nil and nothing is shown.
    open func setBadgeCount(_ newBadgeCount: Int, withCompletionHandler completionHandler: (@Sendable ((any Error)?) -> Void)? = nil) {
        guard let completionHandler else { return }
        queue.async { completionHandler(nil) }
    }

    open func setBadgeCount(_ newBadgeCount: Int) async throws {}

    // MARK: - Underneath

    private func openConnection() throws -> Connection {
        if let connection, connection.isConnected { return connection }
        let opened = try Connection(bus)
        connection = opened
        return opened
    }

    private func daemon() throws -> UserNotificationCenter { UserNotificationCenter(connection: try openConnection()) }

    func daemonIdentifier(_ identifier: String) -> String { applicationIdentifier + "/" + identifier }
    func isMine(_ daemonIdentifier: String) -> Bool { daemonIdentifier.hasPrefix(applicationIdentifier + "/") }
    func ownIdentifier(_ daemonIdentifier: String) -> String { String(daemonIdentifier.dropFirst(applicationIdentifier.count + 1)) }

    /// Keys of the stored user info that carry what chime's model has no field for.
    static let threadKey = "x-un-thread-identifier"
    static let componentsKey = "x-un-date-components"
    static let levelKey = "x-un-interruption-level"

    /// The request as chime's daemon keeps it.
    func chimeRequest(_ request: UNNotificationRequest) throws -> NotificationRequest {
        let c = request.content
        guard !(c.title.isEmpty && c.subtitle.isEmpty && c.body.isEmpty) else {
            throw UNError(.notificationInvalidNoContent, "the notification has no title, subtitle or body")
        }
        var content = NotificationContent(title: c.title.isEmpty ? applicationIdentifier : c.title, subtitle: c.subtitle, body: c.body,
                                          label: applicationIdentifier, sound: c.sound?.sound, urgency: c.interruptionLevel.urgency,
                                          category: c.categoryIdentifier)
        if let sound = c.sound {
            content.insist = sound.critical
            content.volume = sound.volume
        }
        if let image = c.attachments.first { content.icon = image.url.path }
        for (key, value) in c.userInfo {
            guard let key = key.base as? String, let text = Self.text(of: value) else { continue }  // not text: dropped (documented)
            content.userInfo[key] = text
        }
        if !c.threadIdentifier.isEmpty { content.userInfo[Self.threadKey] = c.threadIdentifier }
        // Both are critical urgency on the wire: which one it was is kept for reading it back.
        if c.interruptionLevel == .critical { content.userInfo[Self.levelKey] = "critical" }
        // A click on the popup (where the server reports one) is the default action, as a tap is.
        content.actions = [NotificationAction(identifier: "default", title: "Open")]
        let category = state.withLock { categories.first { $0.identifier == c.categoryIdentifier } }
        for action in category?.actions ?? [] { content.actions.append(NotificationAction(identifier: action.identifier, title: action.title)) }
        let now = WallClock.system.now()
        let trigger: Trigger
        switch request.trigger {
        case nil:
            trigger = .timeInterval(.seconds(1), anchor: now)
        case let interval as UNTimeIntervalNotificationTrigger:
            trigger = .timeInterval(interval.span, repeats: interval.repeats, anchor: now)
        case let calendar as UNCalendarNotificationTrigger:
            trigger = try calendar.chimeTrigger(anchor: now)
            content.userInfo[Self.componentsKey] = Self.encode(calendar.dateComponents)
        default:
            throw UNError(.notificationInvalidNoDate, "\(type(of: request.trigger!)) triggers do not exist on Linux")
        }
        let chime = NotificationRequest(identifier: daemonIdentifier(request.identifier), content: content, trigger: trigger)
        do { try chime.validate(now: now) } catch {
            throw UNError(error.kind == .neverFires ? .notificationInvalidNoDate : .notificationInvalidNoContent, "\(error)")
        }
        return chime
    }

    /// A request of the daemon's as Apple's.
    func request(from chime: NotificationRequest) -> UNNotificationRequest {
        let c = chime.content
        let content = UNMutableNotificationContent()
        content.title = c.title
        content.subtitle = c.subtitle
        content.body = c.body
        content.categoryIdentifier = c.category
        content.interruptionLevel = UNNotificationInterruptionLevel(c.urgency)
        content.sound = c.sound.map { UNNotificationSound(chimeSound: $0, critical: c.insist, volume: c.volume) }
        var info = c.userInfo
        content.threadIdentifier = info.removeValue(forKey: Self.threadKey) ?? ""
        if info.removeValue(forKey: Self.levelKey) == "critical", c.urgency == .critical { content.interruptionLevel = .critical }
        let components = info.removeValue(forKey: Self.componentsKey)
        content.userInfo = info
        let trigger: UNNotificationTrigger
        switch chime.trigger.rule {
        case .interval(let span, let again):
            // Not checked again: it was when it was added (or the daemon did).
            trigger = UNTimeIntervalNotificationTrigger(unchecked: TimeInterval(span.seconds), repeats: again)
        case .calendar, .recurrence:
            let dateComponents = components.flatMap { Self.decode($0) } ?? Foundation.DateComponents()
            trigger = UNCalendarNotificationTrigger(dateMatching: dateComponents, repeats: chime.trigger.repeats, stored: chime.trigger)
        case .instant(let instant):
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: chime.trigger.zone.identifier) ?? .current
            var dateComponents = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: Date(instant))
            dateComponents.timeZone = nil
            trigger = UNCalendarNotificationTrigger(dateMatching: dateComponents, repeats: false, stored: chime.trigger)
        }
        return UNNotificationRequest(identifier: ownIdentifier(chime.identifier), content: content, trigger: trigger)
    }

    func pending() throws -> [UNNotificationRequest] {
        let center = try daemon()
        return try center.pendingSummaries().filter { isMine($0.identifier) && $0.state != .quarantined }.compactMap {
            (try? center.request(withIdentifier: $0.identifier)).map(request(from:))
        }
    }

    func delivered() throws -> [UNNotification] {
        try daemon().deliveredNotifications().filter { isMine($0.identifier) }.map { item in
            UNNotification(date: Date(item.shown), request: known(item.identifier, title: item.title))
        }
    }

    /// The request behind a daemon identifier: as this process added it, else as the daemon has it,
    /// else its title alone (a one-off that fired is no longer pending).
    func known(_ identifier: String, title: String) -> UNNotificationRequest {
        if let request = state.withLock({ added[identifier] }) { return request }
        if let stored = try? daemon().request(withIdentifier: identifier) { return request(from: stored) }
        let content = UNMutableNotificationContent()
        content.title = title
        return UNNotificationRequest(identifier: ownIdentifier(identifier), content: content, trigger: nil)
    }

    /// A user-info value as the daemon keeps it: text, numbers and booleans as text; nil for others.
    static func text(of value: Any) -> String? {
        switch value {
        case let text as String: text
        case let number as NSNumber: number.stringValue
        case let value as any LosslessStringConvertible: value.description
        default: nil
        }
    }

    static func translated(_ error: any Error) -> any Error {
        switch error as? SchedulerError {
        case .refused(.neverFires, let error)?: return UNError(.notificationInvalidNoDate, error.message)
        case .refused(.invalidRequest, let error)?: return UNError(.notificationInvalidNoContent, error.message)
        default: return error
        }
    }

    static func encode(_ c: Foundation.DateComponents) -> String {
        let fields: [(String, Int?)] = [("year", c.year), ("month", c.month), ("day", c.day), ("weekday", c.weekday), ("hour", c.hour),
                                        ("minute", c.minute), ("second", c.second)]
        var parts = fields.compactMap { name, value in value.map { "\(name)=\($0)" } }
        if let zone = c.timeZone?.identifier { parts.append("timeZone=\(zone)") }
        return parts.joined(separator: ";")
    }

    static func decode(_ text: String) -> Foundation.DateComponents? {
        var c = Foundation.DateComponents()
        for part in text.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { return nil }
            if pair[0] == "timeZone" { c.timeZone = TimeZone(identifier: pair[1]); continue }
            guard let value = Int(pair[1]) else { return nil }
            switch pair[0] {
            case "year": c.year = value
            case "month": c.month = value
            case "day": c.day = value
            case "weekday": c.weekday = value
            case "hour": c.hour = value
            case "minute": c.minute = value
            case "second": c.second = value
            default: return nil
            }
        }
        return c
    }

    // MARK: - The delegate's signals

    /// What keeps a popup on screen in the delegate's answer: banner, list, or the older alert
    /// (deprecated by Apple, still honoured).
    static let onScreen = UNNotificationPresentationOptions(rawValue: 1 << 4 | 1 << 3 | 1 << 2)

    /// Listens on a connection of its own, on a thread of its own, for the daemon's signals about
    /// this program's notifications; the delegate hears of them on the main queue.
    private func startListening() {
        state.withLock {
            guard listener == nil else { return }
            let thread = Thread { [weak self] in self?.listen() }
            thread.name = "chime.UserNotifications.listener"
            listener = thread
            thread.start()
        }
    }

    private func listen() {
        guard let connection = try? Connection(bus) else { return }
        let handler: (Message) -> Void = { [weak self] message in self?.heard(message) }
        var tokens: [SubscriptionToken] = []
        for signal: SchedulerSignal in [.fired, .answered, .dismissed] {
            if let token = try? connection.subscribe(signal.matchRule, handler: handler) { tokens.append(token) }
        }
        _ = connection.run { [weak self] in self != nil }
        _ = tokens
    }

    private func heard(_ message: Message) {
        let arguments = message.arguments()
        guard let identifier = arguments.first?.stringValue, isMine(identifier) else { return }
        let signal = message.member.flatMap { SchedulerSignal(rawValue: $0.rawValue) }
        queue.async { [weak self] in
            guard let self else { return }
            let shown = (try? self.daemon().deliveredNotifications().first { $0.identifier == identifier })
            let request = self.known(identifier, title: shown?.title ?? "")
            let sendable = UNNotification(date: shown.map { Date($0.shown) } ?? Date(), request: request)
            switch signal {
            case .fired:
                DispatchQueue.main.async {
                    guard let delegate = self.delegate else { return }
                    delegate.userNotificationCenter(self, willPresent: sendable) { options in
                        guard options.isDisjoint(with: Self.onScreen) else { return }
                        self.queue.async { try? self.daemon().removeDeliveredNotifications(withIdentifiers: [identifier]) }
                    }
                }
            case .answered:
                let key = arguments.count > 1 ? arguments[1].stringValue ?? "" : ""
                let action = key == "default" ? UNNotificationDefaultActionIdentifier : key
                self.respond(sendable, action)
            case .dismissed:
                let category = self.state.withLock { self.categories.first { $0.identifier == request.content.categoryIdentifier } }
                if category?.options.contains(.customDismissAction) == true { self.respond(sendable, UNNotificationDismissActionIdentifier) }
            default:
                break
            }
        }
    }

    private func respond(_ notification: UNNotification, _ action: String) {
        let response = UNNotificationResponse(notification: notification, actionIdentifier: action)
        DispatchQueue.main.async {
            self.delegate?.userNotificationCenter(self, didReceive: response) {}
        }
    }
}
