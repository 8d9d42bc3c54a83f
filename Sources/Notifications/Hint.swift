import DBus

/// A hint of the Desktop Notifications spec (1.3), typed; `custom` carries any other.
public enum Hint: Sendable, Hashable {
    /// `urgency` (byte).
    case urgency(Urgency)
    /// `category`, e.g. `email.arrived` (notify-send passes a comma list through as one string).
    case category(String)
    /// `desktop-entry`: the desktop file's name without `.desktop`.
    case desktopEntry(String)
    /// `image-path`: an icon name or a `file://` URI.
    case imagePath(String)
    /// `image-data`: raw pixels.
    case imageData(ImageData)
    /// `sound-file`: a path to a sound file.
    case soundFile(String)
    /// `sound-name`: a name from the freedesktop sound theme.
    case soundName(String)
    /// `suppress-sound`.
    case suppressSound(Bool)
    /// `transient`: do not keep it in the server's history.
    case transient(Bool)
    /// `resident`: keep it after an action is invoked.
    case resident(Bool)
    /// `x`: the screen position to point at (with `y`).
    case x(Int32)
    /// `y`.
    case y(Int32)
    /// `action-icons`: interpret action keys as icon names.
    case actionIcons(Bool)
    /// `sender-pid` (int64), which libnotify adds to every notification.
    case senderPID(Int64)
    /// Any other hint, with a value of any type.
    case custom(name: String, value: Value)

    /// The hint's name on the wire.
    public var name: String {
        switch self {
        case .urgency: "urgency"
        case .category: "category"
        case .desktopEntry: "desktop-entry"
        case .imagePath: "image-path"
        case .imageData: "image-data"
        case .soundFile: "sound-file"
        case .soundName: "sound-name"
        case .suppressSound: "suppress-sound"
        case .transient: "transient"
        case .resident: "resident"
        case .x: "x"
        case .y: "y"
        case .actionIcons: "action-icons"
        case .senderPID: "sender-pid"
        case .custom(let name, _): name
        }
    }

    /// The hint's value on the wire (before it is wrapped in a variant).
    public var value: Value {
        switch self {
        case .urgency(let urgency): .byte(urgency.rawValue)
        case .category(let text), .desktopEntry(let text), .imagePath(let text), .soundFile(let text),
            .soundName(let text):
            .string(text)
        case .imageData(let image): image.value
        case .suppressSound(let flag), .transient(let flag), .resident(let flag), .actionIcons(let flag):
            .boolean(flag)
        case .x(let number), .y(let number): .int32(number)
        case .senderPID(let pid): .int64(pid)
        case .custom(_, let value): value
        }
    }

    /// Reads a hint as received (an `a{sv}` entry's value, its one variant taken off), typing the
    /// standard ones whose value has the standard type and keeping anything else as `custom`, with
    /// any variant it holds (notify-send's `variant:x-pos:<int32 5>` sends a variant in the variant).
    public init(name: String, value: Value) {
        let inner = value.variantContents
        switch (name, inner) {
        case ("urgency", .byte(let b)) where Urgency(rawValue: b) != nil: self = .urgency(Urgency(rawValue: b)!)
        case ("category", .string(let s)): self = .category(s)
        case ("desktop-entry", .string(let s)): self = .desktopEntry(s)
        case ("image-path", .string(let s)): self = .imagePath(s)
        case ("sound-file", .string(let s)): self = .soundFile(s)
        case ("sound-name", .string(let s)): self = .soundName(s)
        case ("suppress-sound", .boolean(let b)): self = .suppressSound(b)
        case ("transient", .boolean(let b)): self = .transient(b)
        case ("resident", .boolean(let b)): self = .resident(b)
        case ("action-icons", .boolean(let b)): self = .actionIcons(b)
        case ("x", .int32(let n)): self = .x(n)
        case ("y", .int32(let n)): self = .y(n)
        case ("sender-pid", .int64(let n)): self = .senderPID(n)
        case ("image-data", _):
            if let image = ImageData(value: inner) { self = .imageData(image) } else { self = .custom(name: name, value: inner) }
        default: self = .custom(name: name, value: inner)
        }
    }

    /// The `a{sv}` of `Notify`: one entry per name, the last hint of a name winning.
    public static func dictionary(_ hints: [Hint]) -> Value {
        var entries: [Value.DictionaryEntry] = []
        entries.reserveCapacity(hints.count)
        for hint in hints {
            // A handful of hints: a linear search beats hashing.
            let key = Value.string(hint.name)
            let entry = Value.DictionaryEntry(key: key, value: .variant(hint.value))
            if let index = entries.firstIndex(where: { $0.key == key }) {
                entries[index] = entry
            } else {
                entries.append(entry)
            }
        }
        return .dictionary(key: .string, value: .variant, entries)
    }
}
