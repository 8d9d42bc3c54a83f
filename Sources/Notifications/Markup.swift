import DBus

/// The body markup of the Desktop Notifications spec (`<b>`, `<i>`, `<u>`, `<a href>`, `<img>`, the
/// five XML entities), as chime writes and reads it.

/// Escapes text for a markup-rendering server (the body markup is XML's).
public func escapeMarkup(_ text: String) -> String { xmlEscaped(text) }

/// Markup as plain text: tags removed, the five standard entities decoded (one pass, without the
/// string-processing library, which the `chime` binary does not link).
public func stripMarkup(_ text: String) -> String {
    var out = ""
    var inTag = false
    var rest = Substring(text)
    let entities: [(String, Character)] = [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&apos;", "'"), ("&amp;", "&")]
    outer: while let c = rest.first {
        if c == "<" { inTag = true }
        if inTag {
            if c == ">" { inTag = false }
            rest = rest.dropFirst()
            continue
        }
        if c == "&" {
            for (entity, character) in entities where rest.hasPrefix(entity) {
                out.append(character)
                rest = rest.dropFirst(entity.count)
                continue outer
            }
        }
        out.append(c)
        rest = rest.dropFirst()
    }
    return out
}

/// Whether `text` is markup the notification portal (version 2) accepts in `markup-body`: only the
/// tags `b`, `i`, `u` and `a href`, each closed in order, and the five entities or numeric ones. A
/// body such as "a < b" or "R&D" is plain text, not broken markup.
public func isPortalMarkup(_ text: String) -> Bool {
    guard text.contains(where: { $0 == "<" || $0 == "&" }) else { return false }
    var open: [Substring] = []
    var rest = Substring(text)
    while let c = rest.first {
        if c == "<" {
            guard let close = rest.firstIndex(of: ">") else { return false }
            let tag = rest[rest.index(after: rest.startIndex)..<close]
            rest = rest[rest.index(after: close)...]
            if tag.hasPrefix("/") {
                guard open.popLast() == tag.dropFirst() else { return false }
            } else {
                let name = tag.prefix(while: { $0 != " " })
                guard ["b", "i", "u"].contains(name) && name == tag || name == "a" && tag.dropFirst().hasPrefix(" href=") else { return false }
                open.append(name)
            }
        } else if c == "&" {
            guard let semicolon = rest.firstIndex(of: ";") else { return false }
            let entity = rest[rest.index(after: rest.startIndex)..<semicolon]
            let numeric = entity.hasPrefix("#") && entity.count > 1 && entity.dropFirst().allSatisfy { $0.isNumber }
            guard numeric || ["lt", "gt", "amp", "quot", "apos"].contains(entity) else { return false }
            rest = rest[rest.index(after: semicolon)...]
        } else {
            rest = rest.dropFirst()
        }
    }
    return open.isEmpty
}
