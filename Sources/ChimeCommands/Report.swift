// The commands' reports are printed by NotifyTool's printer (Printer.swift: Datum, Field, the
// reports, the one JSON writer); here, the values only the commands have: instants in a zone and
// lengths of time.
import NotifyTool
import Timekeeping

extension Datum {
    /// A moment: ISO 8601 with its UTC offset in `zone`, in both forms.
    static func instant(_ instant: Instant, _ zone: Zone) -> Datum { .moment(zone.iso8601(instant)) }

    /// A length of time: whole seconds in JSON, `10m` in text.
    static func duration(_ span: TimeSpan) -> Datum { .length(nanoseconds: span.nanoseconds, text: span.description) }
}
