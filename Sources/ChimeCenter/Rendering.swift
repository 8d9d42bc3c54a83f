import DBus
import Notifications

/// A notification made to fit one server, and what could not be sent to it.
public struct Rendered: Hashable, Sendable {
    /// The Notify call to make.
    public var notification: Notification
    /// Actions left out because the server has no `actions` capability.
    public var droppedActions: [NotificationAction]
    /// A sound the caller must play itself (the server does not play sounds).
    public var playLocally: Sound?
}

/// Renders `content` for a server with `capabilities`:
///
/// - the subtitle goes first in the body, on a line of its own (bold where the
///   server renders markup); a server without the `body` capability gets
///   "title — subtitle" as the summary and no body;
/// - user text is escaped for servers with `body-markup` (or passed through when
///   `bodyIsMarkup`), and a server without it never gets markup: tags are
///   removed and entities decoded;
/// - actions are sent only where the server has `actions`, else reported as dropped;
/// - the sound is a hint where the server has `sound`, else returned in `playLocally` (chime plays
///   it), and the server is told not to play a sound of its own (`suppress-sound`).
public func render(
    _ content: NotificationContent, for capabilities: [Capability], appName: String = "chime", replacesID: UInt32 = 0
) -> Rendered {
    let markup = capabilities.contains(.bodyMarkup)
    let showsBody = capabilities.contains(.body)
    var summary = content.title
    var body = ""
    if showsBody {
        let mainBody: String
        if markup {
            mainBody = content.bodyIsMarkup ? content.body : escapeMarkup(content.body)
        } else {
            mainBody = content.bodyIsMarkup ? stripMarkup(content.body) : content.body
        }
        if content.subtitle.isEmpty {
            body = mainBody
        } else {
            let subtitle = markup ? "<b>\(escapeMarkup(content.subtitle))</b>" : content.subtitle
            body = mainBody.isEmpty ? subtitle : subtitle + "\n" + mainBody
        }
    } else if !content.subtitle.isEmpty {
        summary = "\(content.title) — \(content.subtitle)"
    }

    var hints: [Hint] = [.urgency(content.urgency), .desktopEntry("chime")]
    if !content.category.isEmpty { hints.append(.category(content.category)) }
    if !content.label.isEmpty { hints.append(.custom(name: "x-chime-label", value: .string(content.label))) }
    var playLocally: Sound? = nil
    if let sound = content.sound {
        if capabilities.contains(.sound) {
            hints.append(sound.hint)
        } else {
            playLocally = sound
            hints.append(.suppressSound(true))
        }
    }
    let canAct = capabilities.contains(.actions)
    let actions = canAct ? content.actions.map { Action(key: $0.identifier, label: $0.shownTitle) } : []
    return Rendered(
        notification: Notification(
            appName: appName, replacesID: replacesID, icon: content.icon, summary: summary, body: body, actions: actions,
            hints: hints, expiration: content.expiry.expiration),
        droppedActions: canAct ? [] : content.actions,
        playLocally: playLocally)
}

