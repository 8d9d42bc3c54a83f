// What the alarm popups show, in the user's language: gettext catalogues (po/, installed as
// share/locale/LANG/LC_MESSAGES/chime.mo). Every string a popup shows goes through `tr`, and
// `po/chime.pot` is made from the calls (`make po/chime.pot`).
import Posix
import Timekeeping

public enum Localization {
    /// The gettext domain.
    public static let domain = "chime"

    /// Where the catalogues are: `CHIME_LOCALEDIR`, else `share/locale` beside the binary's `bin`
    /// (`/usr/bin/chime` → `/usr/share/locale`).
    public static func directory() -> String {
        if let directory = Sys.environment("CHIME_LOCALEDIR"), !directory.isEmpty { return directory }
        guard let binary = Sys.linkTarget("/proc/self/exe"), let slash = binary.lastIndex(of: "/") else { return "/usr/share/locale" }
        let bin = binary[..<slash]
        let prefix = bin.lastIndex(of: "/").map { String(bin[..<$0]) } ?? ""
        return prefix + "/share/locale"
    }

    /// Reads the user's locale and the catalogues (the daemon, once at start).
    public static func setUp() {
        Sys.setUpTranslations(domain: domain, directory: directory())
    }
}

extension PhraseLanguage {
    /// The user's language for phrases and the words said back (LC_ALL, LC_TIME, LANG), read once.
    public static let ofUser = PhraseLanguage.user { Sys.environment($0) }
    /// The language the popups' words are in: the messages' (as gettext picks them: LANGUAGE's
    /// first, then LC_ALL, LC_MESSAGES, LANG), so a reminder's "Klingelt" is followed by German
    /// words too. Read once.
    public static let ofMessages: PhraseLanguage = {
        for name in ["LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"] {
            if let value = Sys.environment(name), !value.isEmpty, value != "C", !value.hasPrefix("C."), value != "POSIX" {
                return PhraseLanguage(locale: value)
            }
        }
        return .english
    }()
    /// Whether the user's clock is the 12-hour one (LC_ALL, LC_TIME, LANG), read once.
    public static let userHasTwelveHourClock = PhraseLanguage.twelveHourClock { Sys.environment($0) }
}

/// `message` in the user's language. A `%s` in it is replaced by `argument`.
public func tr(_ message: String, _ argument: String? = nil) -> String {
    let translated = Sys.translate(message)
    guard let argument else { return translated }
    return translated.replacing("%s", with: argument)
}

extension NotificationAction {
    /// The title a popup shows: chime's own Snooze and Dismiss in the user's language (a title a
    /// program gave stays as it gave it).
    public var shownTitle: String {
        if self == .snooze { return tr("Snooze") }
        if self == .dismiss { return tr("Dismiss") }
        if self == .skipOccurrence { return tr("Skip this one") }
        if self == .undoSkip { return tr("Undo") }
        if self == .open { return tr("Open") }
        return title
    }
}
