import Testing
import TestSupport
@testable import Timekeeping

/// Phrases in English, German, French and Spanish, read as said at a fixed moment, against the times a person means
/// (written out by hand below, not computed), and the words said back read again as the same rule.
@Suite struct PhraseTests {
    static let berlin = try! Zone.named("Europe/Berlin")
    /// Thu 26 Nov 2026, 10:00 in Berlin.
    static let said = Instant(seconds: 1_795_683_600)

    static func context(_ language: PhraseLanguage = .english, said: Instant = said, zone: Zone = berlin, twelve: Bool = false) -> PhraseContext {
        PhraseContext(said: said, zone: zone, language: language, twelveHourClock: twelve)
    }

    /// The first `count` times a phrase fires after it is said, in Berlin's ISO 8601.
    static func times(_ phrase: String, _ count: Int = 2, context: PhraseContext = context()) throws -> [String] {
        let reading = try Rule.reading(phrase, context)
        var out: [String] = []
        var t = context.said
        while out.count < count, let next = reading.rule.nextFire(after: t, anchor: context.said, repeats: true, in: context.zone) {
            out.append(context.zone.iso8601(next))
            t = next
        }
        return out
    }

    @Test(arguments: [
        // Once (said Thu 26 Nov 2026 10:00).
        ("tomorrow 7am", ["2026-11-27T07:00:00+01:00"]),
        ("7am tomorrow", ["2026-11-27T07:00:00+01:00"]),
        ("tomorrow at 7:30pm", ["2026-11-27T19:30:00+01:00"]),
        ("the day after tomorrow 09:00", ["2026-11-28T09:00:00+01:00"]),
        ("today 18:00", ["2026-11-26T18:00:00+01:00"]),
        ("friday 16:35", ["2026-11-27T16:35:00+01:00"]),
        ("thursday 16:35", ["2026-11-26T16:35:00+01:00"]),
        ("thursday 09:00", ["2026-12-03T09:00:00+01:00"]),
        ("next friday 16:35", ["2026-11-27T16:35:00+01:00"]),
        ("next thursday 16:35", ["2026-12-03T16:35:00+01:00"]),
        ("24 Dec 18:00", ["2026-12-24T18:00:00+01:00"]),
        ("December 24th 6pm", ["2026-12-24T18:00:00+01:00"]),
        ("2026-12-24 18:00", ["2026-12-24T18:00:00+01:00"]),
        ("24.12.2026 18:00", ["2026-12-24T18:00:00+01:00"]),
        ("12/24/2026 6pm", ["2026-12-24T18:00:00+01:00"]),
        ("1 Jan 00:00", ["2027-01-01T00:00:00+01:00"]),
        ("in 2 days at 9:00", ["2026-11-28T09:00:00+01:00"]),
        ("in an hour and a half", ["2026-11-26T11:30:00+01:00"]),
        ("in an hour", ["2026-11-26T11:00:00+01:00"]),
        ("in 90 minutes", ["2026-11-26T11:30:00+01:00"]),
        ("in 1 hour and 15 minutes", ["2026-11-26T11:15:00+01:00"]),
        ("now + 2 hours", ["2026-11-26T12:00:00+01:00"]),
        ("4pm + 3 days", ["2026-11-29T16:00:00+01:00"]),
        ("noon tomorrow", ["2026-11-27T12:00:00+01:00"]),
        ("midnight", ["2026-11-27T00:00:00+01:00"]),
        ("teatime", ["2026-11-26T16:00:00+01:00"]),
        ("next week", ["2026-12-03T10:00:00+01:00"]),
        ("half past 7 tomorrow", ["2026-11-27T07:30:00+01:00"]),
        ("quarter to 8 tomorrow", ["2026-11-27T07:45:00+01:00"]),
        ("tomorrow evening at 8", ["2026-11-27T20:00:00+01:00"]),
        ("0730 tomorrow", ["2026-11-27T07:30:00+01:00"]),
        ("next month on the 1st at 9", ["2026-12-01T09:00:00+01:00"]),
        // The words task and calendar apps taught people (issue 50).
        ("weekly on monday at 9", ["2026-11-30T09:00:00+01:00", "2026-12-07T09:00:00+01:00"]),
        ("monthly on the 15th at noon", ["2026-12-15T12:00:00+01:00", "2027-01-15T12:00:00+01:00"]),
        ("monthly on the last friday at 16:35", ["2026-11-27T16:35:00+01:00", "2026-12-25T16:35:00+01:00"]),
        ("yearly on dec 24 at 18:00", ["2026-12-24T18:00:00+01:00", "2027-12-24T18:00:00+01:00"]),
        ("every 15th at noon", ["2026-12-15T12:00:00+01:00", "2027-01-15T12:00:00+01:00"]),
        ("every morning at 7", ["2026-11-27T07:00:00+01:00", "2026-11-28T07:00:00+01:00"]),
        ("every morning", ["2026-11-27T09:00:00+01:00", "2026-11-28T09:00:00+01:00"]),
        ("every afternoon at 3", ["2026-11-26T15:00:00+01:00", "2026-11-27T15:00:00+01:00"]),
        ("every evening", ["2026-11-26T19:00:00+01:00", "2026-11-27T19:00:00+01:00"]),
        ("every night", ["2026-11-26T22:00:00+01:00", "2026-11-27T22:00:00+01:00"]),
        ("every noon", ["2026-11-26T12:00:00+01:00", "2026-11-27T12:00:00+01:00"]),
        ("sat and sun at 10", ["2026-11-28T10:00:00+01:00", "2026-11-29T10:00:00+01:00"]),
        ("monday to friday at 6:45", ["2026-11-27T06:45:00+01:00", "2026-11-30T06:45:00+01:00"]),
        ("every last day of the month at 9", ["2026-11-30T09:00:00+01:00", "2026-12-31T09:00:00+01:00"]),
        ("every weekend at 9", ["2026-11-28T09:00:00+01:00", "2026-11-29T09:00:00+01:00"]),
        ("in 1h30m", ["2026-11-26T11:30:00+01:00"]),
        ("Dec 24 1630", ["2026-12-24T16:30:00+01:00"]),
        // At a time alone: the next one, each day (as 16:35 is).
        ("7am", ["2026-11-27T07:00:00+01:00", "2026-11-28T07:00:00+01:00"]),
        ("noon", ["2026-11-26T12:00:00+01:00", "2026-11-27T12:00:00+01:00"]),
        // Repeating.
        ("every day 07:00", ["2026-11-27T07:00:00+01:00", "2026-11-28T07:00:00+01:00"]),
        ("daily at 6:30am", ["2026-11-27T06:30:00+01:00", "2026-11-28T06:30:00+01:00"]),
        ("every weekday 07:00", ["2026-11-27T07:00:00+01:00", "2026-11-30T07:00:00+01:00"]),
        ("weekends 09:00", ["2026-11-28T09:00:00+01:00", "2026-11-29T09:00:00+01:00"]),
        ("every monday and thursday 9:00", ["2026-11-30T09:00:00+01:00", "2026-12-03T09:00:00+01:00"]),
        ("mondays 8am", ["2026-11-30T08:00:00+01:00", "2026-12-07T08:00:00+01:00"]),
        ("every other tuesday 09:00", ["2026-12-01T09:00:00+01:00", "2026-12-15T09:00:00+01:00"]),
        ("every second tuesday 09:00", ["2026-12-01T09:00:00+01:00", "2026-12-15T09:00:00+01:00"]),
        ("every 3 days at 9:00", ["2026-11-27T09:00:00+01:00", "2026-11-30T09:00:00+01:00"]),
        ("every 2 weeks on friday 17:00", ["2026-11-27T17:00:00+01:00", "2026-12-11T17:00:00+01:00"]),
        ("last friday of the month 16:35", ["2026-11-27T16:35:00+01:00", "2026-12-25T16:35:00+01:00"]),
        ("every first monday of the month 10:00", ["2026-12-07T10:00:00+01:00", "2027-01-04T10:00:00+01:00"]),
        ("1st of every month 09:00", ["2026-12-01T09:00:00+01:00", "2027-01-01T09:00:00+01:00"]),
        ("the last day of the month 20:00", ["2026-11-30T20:00:00+01:00", "2026-12-31T20:00:00+01:00"]),
        ("every 2nd and 4th saturday 10:00", ["2026-11-28T10:00:00+01:00", "2026-12-12T10:00:00+01:00"]),
        ("every year on 24 Dec at 18:00", ["2026-12-24T18:00:00+01:00", "2027-12-24T18:00:00+01:00"]),
        ("every 25 minutes", ["2026-11-26T10:25:00+01:00", "2026-11-26T10:50:00+01:00"]),
        ("every 2 months 09:00", ["2026-11-27T09:00:00+01:00", "2027-01-27T09:00:00+01:00"]),
    ])
    func english(_ phrase: String, _ expected: [String]) throws {
        #expect(try Self.times(phrase, expected.count) == expected)
    }

    @Test(arguments: [
        ("morgen um 7 Uhr", ["2026-11-27T07:00:00+01:00"]),
        ("morgen um 19:30", ["2026-11-27T19:30:00+01:00"]),
        ("übermorgen um 9", ["2026-11-28T09:00:00+01:00"]),
        ("heute um 18 Uhr", ["2026-11-26T18:00:00+01:00"]),
        ("am Freitag um 16:35", ["2026-11-27T16:35:00+01:00"]),
        ("nächsten Donnerstag um 16:35", ["2026-12-03T16:35:00+01:00"]),
        ("am 24. Dezember um 18 Uhr", ["2026-12-24T18:00:00+01:00"]),
        ("am 24.12. um 18:00", ["2026-12-24T18:00:00+01:00"]),
        ("24.12.2026 18:00", ["2026-12-24T18:00:00+01:00"]),
        ("in einer Stunde", ["2026-11-26T11:00:00+01:00"]),
        ("in 2 Tagen um 9:00", ["2026-11-28T09:00:00+01:00"]),
        ("morgen halb acht", ["2026-11-27T07:30:00+01:00"]),
        ("morgen viertel nach 7", ["2026-11-27T07:15:00+01:00"]),
        ("morgen viertel vor 8", ["2026-11-27T07:45:00+01:00"]),
        ("morgen um 7 Uhr abends", ["2026-11-27T19:00:00+01:00"]),
        ("um 19 Uhr am Montag", ["2026-11-30T19:00:00+01:00"]),
        ("morgen früh um 7", ["2026-11-27T07:00:00+01:00"]),
        ("heute abend um 8", ["2026-11-26T20:00:00+01:00"]),
        ("mittags", ["2026-11-26T12:00:00+01:00", "2026-11-27T12:00:00+01:00"]),
        ("jeden Tag um 7 Uhr", ["2026-11-27T07:00:00+01:00", "2026-11-28T07:00:00+01:00"]),
        ("täglich um 6:30", ["2026-11-27T06:30:00+01:00", "2026-11-28T06:30:00+01:00"]),
        ("werktags um 7", ["2026-11-27T07:00:00+01:00", "2026-11-30T07:00:00+01:00"]),
        ("am Wochenende um 9", ["2026-11-28T09:00:00+01:00", "2026-11-29T09:00:00+01:00"]),
        ("montags um 8", ["2026-11-30T08:00:00+01:00", "2026-12-07T08:00:00+01:00"]),
        ("jeden Montag und Donnerstag um 9:00", ["2026-11-30T09:00:00+01:00", "2026-12-03T09:00:00+01:00"]),
        ("jeden zweiten Dienstag um 9:00", ["2026-12-01T09:00:00+01:00", "2026-12-15T09:00:00+01:00"]),
        ("alle 3 Tage um 9:00", ["2026-11-27T09:00:00+01:00", "2026-11-30T09:00:00+01:00"]),
        ("alle 2 Wochen am Freitag um 17:00", ["2026-11-27T17:00:00+01:00", "2026-12-11T17:00:00+01:00"]),
        ("am letzten Freitag im Monat um 16:35", ["2026-11-27T16:35:00+01:00", "2026-12-25T16:35:00+01:00"]),
        ("jeden ersten Montag im Monat um 10:00", ["2026-12-07T10:00:00+01:00", "2027-01-04T10:00:00+01:00"]),
        ("am 1. jedes Monats um 9:00", ["2026-12-01T09:00:00+01:00", "2027-01-01T09:00:00+01:00"]),
        ("jedes Jahr am 24.12. um 18:00", ["2026-12-24T18:00:00+01:00", "2027-12-24T18:00:00+01:00"]),
        ("alle 25 Minuten", ["2026-11-26T10:25:00+01:00", "2026-11-26T10:50:00+01:00"]),
        ("wöchentlich am Montag um 9", ["2026-11-30T09:00:00+01:00", "2026-12-07T09:00:00+01:00"]),
        ("monatlich am 15. um 12", ["2026-12-15T12:00:00+01:00", "2027-01-15T12:00:00+01:00"]),
        ("jährlich am 24.12. um 18 Uhr", ["2026-12-24T18:00:00+01:00", "2027-12-24T18:00:00+01:00"]),
        ("jeden 15. um 12", ["2026-12-15T12:00:00+01:00", "2027-01-15T12:00:00+01:00"]),
        ("jeden Morgen um 7", ["2026-11-27T07:00:00+01:00", "2026-11-28T07:00:00+01:00"]),
        ("jeden Abend", ["2026-11-26T19:00:00+01:00", "2026-11-27T19:00:00+01:00"]),
        ("jede Nacht um 23 Uhr", ["2026-11-26T23:00:00+01:00", "2026-11-27T23:00:00+01:00"]),
        ("in anderthalb Stunden", ["2026-11-26T11:30:00+01:00"]),
        ("übermorgen um 7", ["2026-11-28T07:00:00+01:00"]),
        ("montags bis freitags um 6:45", ["2026-11-27T06:45:00+01:00", "2026-11-30T06:45:00+01:00"]),
        ("Samstag und Sonntag um 10", ["2026-11-28T10:00:00+01:00", "2026-11-29T10:00:00+01:00"]),
    ])
    func german(_ phrase: String, _ expected: [String]) throws {
        #expect(try Self.times(phrase, expected.count, context: Self.context(.german)) == expected)
    }

    @Test(arguments: [
        ("demain à 7h", ["2026-11-27T07:00:00+01:00"]),
        ("aujourd'hui à 18h", ["2026-11-26T18:00:00+01:00"]),
        ("après-demain à 9h", ["2026-11-28T09:00:00+01:00"]),
        ("apres-demain a 9h", ["2026-11-28T09:00:00+01:00"]),
        ("vendredi prochain à 16h35", ["2026-11-27T16:35:00+01:00"]),
        ("jeudi prochain à 9h", ["2026-12-03T09:00:00+01:00"]),
        ("le 24 décembre à 18h", ["2026-12-24T18:00:00+01:00"]),
        ("le 24/12 à 18h", ["2026-12-24T18:00:00+01:00"]),
        ("dans 10 minutes", ["2026-11-26T10:10:00+01:00"]),
        ("dans une heure et demie", ["2026-11-26T11:30:00+01:00"]),
        ("dans 2 jours à 9h", ["2026-11-28T09:00:00+01:00"]),
        ("demain à 7 heures et demie", ["2026-11-27T07:30:00+01:00"]),
        ("demain à 7 heures 20", ["2026-11-27T07:20:00+01:00"]),
        ("demain à 8 heures moins le quart", ["2026-11-27T07:45:00+01:00"]),
        ("demain à 7h du soir", ["2026-11-27T19:00:00+01:00"]),
        ("demain soir à 8h", ["2026-11-27T20:00:00+01:00"]),
        ("ce soir à 20h", ["2026-11-26T20:00:00+01:00"]),
        ("demain à midi et demi", ["2026-11-27T12:30:00+01:00"]),
        ("la semaine prochaine", ["2026-12-03T10:00:00+01:00"]),
        ("tous les jours à 8h", ["2026-11-27T08:00:00+01:00", "2026-11-28T08:00:00+01:00"]),
        ("quotidiennement à 6h30", ["2026-11-27T06:30:00+01:00", "2026-11-28T06:30:00+01:00"]),
        ("tous les lundis et jeudis à 18h", ["2026-11-26T18:00:00+01:00", "2026-11-30T18:00:00+01:00"]),
        ("le lundi et le jeudi à 18h", ["2026-11-26T18:00:00+01:00", "2026-11-30T18:00:00+01:00"]),
        ("en semaine à 6h45", ["2026-11-27T06:45:00+01:00", "2026-11-30T06:45:00+01:00"]),
        ("du lundi au vendredi à 7h", ["2026-11-27T07:00:00+01:00", "2026-11-30T07:00:00+01:00"]),
        ("le week-end à 10h", ["2026-11-28T10:00:00+01:00", "2026-11-29T10:00:00+01:00"]),
        ("tous les matins", ["2026-11-27T09:00:00+01:00", "2026-11-28T09:00:00+01:00"]),
        ("chaque soir", ["2026-11-26T19:00:00+01:00", "2026-11-27T19:00:00+01:00"]),
        ("toutes les 2 semaines le vendredi à 17h", ["2026-11-27T17:00:00+01:00", "2026-12-11T17:00:00+01:00"]),
        ("tous les 3 jours à 9h", ["2026-11-27T09:00:00+01:00", "2026-11-30T09:00:00+01:00"]),
        ("le 15 de chaque mois à midi", ["2026-12-15T12:00:00+01:00", "2027-01-15T12:00:00+01:00"]),
        ("tous les 15 du mois à midi", ["2026-12-15T12:00:00+01:00", "2027-01-15T12:00:00+01:00"]),
        ("mensuellement le 15 à midi", ["2026-12-15T12:00:00+01:00", "2027-01-15T12:00:00+01:00"]),
        ("le 1er de chaque mois à 9h", ["2026-12-01T09:00:00+01:00", "2027-01-01T09:00:00+01:00"]),
        ("chaque dernier vendredi du mois à 16h35", ["2026-11-27T16:35:00+01:00", "2026-12-25T16:35:00+01:00"]),
        ("le premier lundi du mois à 10h", ["2026-12-07T10:00:00+01:00", "2027-01-04T10:00:00+01:00"]),
        ("le dernier jour du mois à 20h", ["2026-11-30T20:00:00+01:00", "2026-12-31T20:00:00+01:00"]),
        ("le 2e et le 4e samedi du mois à 10h", ["2026-11-28T10:00:00+01:00", "2026-12-12T10:00:00+01:00"]),
        ("tous les ans le 24 décembre à 18h", ["2026-12-24T18:00:00+01:00", "2027-12-24T18:00:00+01:00"]),
        ("toutes les 25 minutes", ["2026-11-26T10:25:00+01:00", "2026-11-26T10:50:00+01:00"]),
        ("toutes les heures", ["2026-11-26T11:00:00+01:00", "2026-11-26T12:00:00+01:00"]),
    ])
    func french(_ phrase: String, _ expected: [String]) throws {
        #expect(try Self.times(phrase, expected.count, context: Self.context(.french)) == expected)
    }

    @Test(arguments: [
        ("mañana a las 7", ["2026-11-27T07:00:00+01:00"]),
        ("manana a las 7", ["2026-11-27T07:00:00+01:00"]),
        ("hoy a las 18:00", ["2026-11-26T18:00:00+01:00"]),
        ("pasado mañana a las 9", ["2026-11-28T09:00:00+01:00"]),
        ("el próximo jueves a las 16:35", ["2026-12-03T16:35:00+01:00"]),
        ("el viernes que viene a las 9", ["2026-11-27T09:00:00+01:00"]),
        ("el 24 de diciembre a las 18:00", ["2026-12-24T18:00:00+01:00"]),
        ("el 24 de diciembre de 2026 a las 18:00", ["2026-12-24T18:00:00+01:00"]),
        ("dentro de 2 horas", ["2026-11-26T12:00:00+01:00"]),
        ("en una hora y media", ["2026-11-26T11:30:00+01:00"]),
        ("dentro de media hora", ["2026-11-26T10:30:00+01:00"]),
        ("mañana a las 7 y media", ["2026-11-27T07:30:00+01:00"]),
        ("mañana a las 8 menos cuarto", ["2026-11-27T07:45:00+01:00"]),
        ("mañana a las 7 de la tarde", ["2026-11-27T19:00:00+01:00"]),
        ("mañana por la mañana a las 7", ["2026-11-27T07:00:00+01:00"]),
        ("esta noche a las 9", ["2026-11-26T21:00:00+01:00"]),
        ("todos los días a las 8", ["2026-11-27T08:00:00+01:00", "2026-11-28T08:00:00+01:00"]),
        ("diariamente a las 6:30", ["2026-11-27T06:30:00+01:00", "2026-11-28T06:30:00+01:00"]),
        ("cada lunes a las 9", ["2026-11-30T09:00:00+01:00", "2026-12-07T09:00:00+01:00"]),
        ("todos los lunes y jueves a las 18:00", ["2026-11-26T18:00:00+01:00", "2026-11-30T18:00:00+01:00"]),
        ("de lunes a viernes a las 6:45", ["2026-11-27T06:45:00+01:00", "2026-11-30T06:45:00+01:00"]),
        ("del lunes al viernes a las 7", ["2026-11-27T07:00:00+01:00", "2026-11-30T07:00:00+01:00"]),
        ("entre semana a las 7", ["2026-11-27T07:00:00+01:00", "2026-11-30T07:00:00+01:00"]),
        ("los fines de semana a las 10", ["2026-11-28T10:00:00+01:00", "2026-11-29T10:00:00+01:00"]),
        ("cada mañana a las 7", ["2026-11-27T07:00:00+01:00", "2026-11-28T07:00:00+01:00"]),
        ("todas las noches", ["2026-11-26T22:00:00+01:00", "2026-11-27T22:00:00+01:00"]),
        ("cada 2 semanas el viernes a las 17:00", ["2026-11-27T17:00:00+01:00", "2026-12-11T17:00:00+01:00"]),
        ("cada 3 días a las 9", ["2026-11-27T09:00:00+01:00", "2026-11-30T09:00:00+01:00"]),
        ("el 15 de cada mes a mediodía", ["2026-12-15T12:00:00+01:00", "2027-01-15T12:00:00+01:00"]),
        ("el día 15 de cada mes a las 9", ["2026-12-15T09:00:00+01:00", "2027-01-15T09:00:00+01:00"]),
        ("el último viernes de cada mes a las 16:35", ["2026-11-27T16:35:00+01:00", "2026-12-25T16:35:00+01:00"]),
        ("el primer lunes de cada mes a las 10", ["2026-12-07T10:00:00+01:00", "2027-01-04T10:00:00+01:00"]),
        ("el segundo y cuarto sábado de cada mes a las 10", ["2026-11-28T10:00:00+01:00", "2026-12-12T10:00:00+01:00"]),
        ("el último día del mes a las 20:00", ["2026-11-30T20:00:00+01:00", "2026-12-31T20:00:00+01:00"]),
        ("cada año el 24 de diciembre a las 18:00", ["2026-12-24T18:00:00+01:00", "2027-12-24T18:00:00+01:00"]),
        ("cada 25 minutos", ["2026-11-26T10:25:00+01:00", "2026-11-26T10:50:00+01:00"]),
    ])
    func spanish(_ phrase: String, _ expected: [String]) throws {
        #expect(try Self.times(phrase, expected.count, context: Self.context(.spanish)) == expected)
    }

    /// Where a word means one thing in the user's language and another in the phrase's (`sept`:
    /// seven or September; `a`: one or at), the phrase is read in the language that reads it.
    @Test func aWordOfTwoLanguagesIsReadInThePhrases() throws {
        #expect(try Self.times("sept 24 6pm", 1, context: Self.context(.french)) == ["2027-09-24T18:00:00+02:00"])
        #expect(try Self.times("demain à sept heures", 1, context: Self.context(.french)) == ["2026-11-27T07:00:00+01:00"])
        #expect(try Self.times("mañana a las 7", 1, context: Self.context(.english)) == ["2026-11-27T07:00:00+01:00"])
        #expect(try Self.times("in an hour", 1, context: Self.context(.french)) == ["2026-11-26T11:00:00+01:00"])
        #expect(try Self.times("mar 10 9:00", 1, context: Self.context(.spanish)) == ["2027-03-10T09:00:00+01:00"])
        // When no language reads it as a time to come, the error is of the reading that understood
        // the words, in the user's language.
        let passed = #expect(throws: RuleError.self) { try Phrase.read("hoy a las 9:00", Self.context(.german)) }
        #expect(passed?.message == "Do 26. Nov 2026 09:00 ist vorbei")
    }

    /// The most common problems are said in the user's language.
    @Test(arguments: [(PhraseLanguage.english, "say when, e.g. 'tomorrow 07:00' or 'every monday 09:00'"),
                      (.german, "sagen Sie, wann, z. B. „morgen um 07:00“ oder „jeden Montag um 09:00“"),
                      (.french, "dites quand, p. ex. « demain à 07:00 » ou « tous les lundis à 09:00 »"),
                      (.spanish, "diga cuándo, p. ej. «mañana a las 07:00» o «cada lunes a las 09:00»")])
    func problemsAreSaidInTheUsersLanguage(_ language: PhraseLanguage, _ sayWhen: String) throws {
        #expect(#expect(throws: RuleError.self) { try Phrase.read("   ", Self.context(language)) }?.message == sayWhen)
        let secondTime = #expect(throws: RuleError.self) { try Phrase.read("9:00 10:00", Self.context(language)) }
        #expect(secondTime?.offset == 5 && secondTime?.length == 5)
        #expect(secondTime?.message == language.book.say(.second(.time)))
        #expect(Set(PhraseLanguage.allCases.map { $0.book.say(.second(.time)) }).count == 4)
    }

    /// What is said back reads again, in every language, as the same rule.
    @Test(arguments: ["tomorrow 7am", "next friday 16:35", "in an hour and a half", "every day 07:00", "every weekday 07:00",
                      "weekly on monday at 9", "every 15th at noon", "every morning", "sat and sun at 10", "monday to friday at 6:45",
                      "next month on the 1st at 9", "jeden Abend", "monatlich am 15. um 12",
                      "weekends 09:00", "every monday and thursday 9:00", "every other tuesday 09:00", "every 3 days at 9:00",
                      "last friday of the month 16:35", "1st of every month 09:00", "the last day of the month 20:00",
                      "every 2nd and 4th saturday 10:00", "every year on 24 Dec at 18:00", "every 25 minutes", "7am",
                      "every 2 months 09:00", "jeden zweiten Dienstag um 9:00", "alle 2 Wochen am Freitag um 17:00",
                      "every 2 months on the 15th at 8:00", "every 3 months on the first monday at 9",
                      "demain à 7h", "tous les lundis et jeudis à 18h", "le 15 de chaque mois à midi", "dans 10 minutes",
                      "chaque dernier vendredi du mois à 16h35", "en semaine à 6h45", "toutes les 2 semaines le mardi à 9h",
                      "tous les ans le 24 décembre à 18h", "le 2e et le 4e samedi du mois à 10h", "tous les matins",
                      "mañana a las 7", "cada lunes a las 9", "el 15 de cada mes a mediodía", "dentro de 2 horas",
                      "de lunes a viernes a las 6:45", "el último viernes de cada mes a las 16:35", "los fines de semana a las 10",
                      "cada 2 semanas el martes a las 9", "el segundo y cuarto sábado de cada mes a las 10",
                      "cada año el 24 de diciembre a las 18:00", "cada 2 meses el último día a las 9", "todas las noches"])
    func theWordsSaidBackReadAsTheSameRule(_ phrase: String) throws {
        for language in PhraseLanguage.allCases {
            let context = Self.context(language)
            let reading = try Phrase.read(phrase, context)
            let again = try Phrase.read(reading.words, context)
            #expect(again.rule == reading.rule, "\(phrase) → \(reading.words) → \(again.words)")
            #expect(again.words == reading.words)
        }
    }

    @Test func germanIsSaidBackInGerman() throws {
        #expect(try Phrase.read("every other tuesday 09:00", Self.context(.german)).words == "jeden zweiten Dienstag um 09:00, ab Di 1. Dez 2026")
        #expect(try Phrase.read("jeden zweiten Dienstag um 9:00", Self.context(.english)).words == "every 2 weeks on Tuesday at 09:00, from Tue 1 Dec 2026")
        #expect(try Phrase.read("morgen um 7", Self.context(.german)).words == "am Fr 27. Nov 2026 um 07:00")
        #expect(try Phrase.read("last friday of the month 16:35", Self.context(.german)).words == "am letzten Freitag jedes Monats um 16:35")
    }

    @Test func frenchAndSpanishAreSaidBackInTheirOwnWords() throws {
        #expect(try Phrase.read("every other tuesday 09:00", Self.context(.french)).words
            == "toutes les 2 semaines le mardi à 09:00, à partir du mardi 1er décembre 2026")
        #expect(try Phrase.read("every other tuesday 09:00", Self.context(.spanish)).words
            == "cada 2 semanas el martes a las 09:00, desde el martes 1 de diciembre de 2026")
        #expect(try Phrase.read("mañana a las 7", Self.context(.french)).words == "le vendredi 27 novembre 2026 à 07:00")
        #expect(try Phrase.read("demain à 1h", Self.context(.spanish)).words == "el viernes 27 de noviembre de 2026 a la 01:00")
        #expect(try Phrase.read("every 2nd and 4th saturday 10:00", Self.context(.spanish)).words
            == "el segundo y cuarto sábado de cada mes a las 10:00")
        #expect(try Phrase.read("every 2nd and 4th saturday 10:00", Self.context(.french)).words
            == "le deuxième et quatrième samedi de chaque mois à 10:00")
        #expect(try Phrase.read("every 3 months on the 1st at 9", Self.context(.english)).words
            == "every 3 months on the 1st at 09:00, from Tue 1 Dec 2026")
    }

    /// An hour without am or pm on a 12-hour clock has two readings: both are said, none is taken.
    @Test func anHourThatCanMeanTwoThingsIsAskedAbout() throws {
        let error = #expect(throws: RuleError.self) { try Phrase.read("at 9", Self.context(twelve: true)) }
        #expect(error?.message.contains("09:00 or 21:00") == true)
        // A 24-hour clock settles it; so do am, pm, minutes and Uhr.
        #expect(try Self.times("at 9", 1) == ["2026-11-27T09:00:00+01:00"])
        #expect(try Self.times("tomorrow 9pm", 1, context: Self.context(twelve: true)) == ["2026-11-27T21:00:00+01:00"])
        #expect(try Self.times("tomorrow 9:00", 1, context: Self.context(twelve: true)) == ["2026-11-27T09:00:00+01:00"])
        #expect(try Self.times("morgen um 9 Uhr", 1, context: Self.context(.german, twelve: true)) == ["2026-11-27T09:00:00+01:00"])
    }

    /// An unknown word is pointed at, with the nearest word chime knows.
    @Test(arguments: [
        ("tomorow 7am", "tomorow", "tomorrow", PhraseLanguage.english),
        ("every tusday 9:00", "tusday", "tuesday", .english),
        ("next frieday", "frieday", "friday", .english),
        ("jeden Dienstg um 9", "Dienstg", "dienstag", .english),
        ("morgn um 7", "morgn", "morgen", .english),
        ("jeden Dienstg um 9", "Dienstg", "dienstag", .german),
        ("demian à 7h", "demian", "demain", .french),
        ("tous les vendredsi à 9h", "vendredsi", "vendredi", .french),
        ("cada miercole a las 9", "miercole", "miércoles", .spanish),
        ("el proxmo lunes a las 9", "proxmo", "próximo", .spanish),
    ])
    func anUnknownWordIsPointedAt(_ phrase: String, _ word: String, _ nearest: String, _ language: PhraseLanguage) throws {
        let error = #expect(throws: RuleError.self) { try Rule.reading(phrase, Self.context(language)) }
        guard let error else { return }
        let characters = Array(phrase)
        #expect(String(characters[error.offset..<(error.offset + error.length)]) == word)
        #expect(error.message.contains(nearest), "\(error.message)")
        #expect(error.suggests)
    }

    /// What a phrase cannot mean is refused with why, never guessed.
    @Test(arguments: ["tomorrow", "every monday", "the 3rd", "next", "in", "every", "31.02.2027 10:00", "yesterday 9:00", "25:00 tomorrow",
                      "13pm tomorrow", "2020-01-01 10:00 tomorrow", "every day every monday 9:00"])
    func whatCannotBeMeantIsRefused(_ phrase: String) {
        #expect(throws: RuleError.self) { try Rule.reading(phrase, Self.context()) }
    }

    /// A machine form is read as before, and its errors are its own.
    @Test func machineFormsAreReadFirst() throws {
        #expect(try Rule.reading("Mon..Fri *-*-* 16:35:00", Self.context()).words == nil)
        #expect(try Rule.reading("16:35 mon-fri", Self.context()).words == nil)
        let error = #expect(throws: RuleError.self) { try Rule.reading("Mon..Fri *-*-* 25:00", Self.context()) }
        #expect(error?.message.contains("hour 25") == true)
    }

    /// Across the change to summer time, an every-other rule keeps its wall-clock time.
    @Test func aRepetitionKeepsItsTimeAcrossDaylightSaving() throws {
        let said = Instant(seconds: 1_805_529_600)  // Sat 20 Mar 2027 08:00 UTC
        let times = try Self.times("every other sunday 02:30", 3, context: Self.context(said: said))
        // Sun 21 Mar in winter time, 4 and 18 Apr in summer time: at 02:30 all the same.
        #expect(times.count == 3)
        #expect(times[1].hasSuffix("+02:00") && times[2].hasSuffix("+02:00"))
        #expect(times[1].contains("T02:30:00") && times[2].contains("T02:30:00"))
    }

    /// Rules written the machine way are said in words too, and the words read as the same rule;
    /// a shape words do not say is shown as written.
    @Test(arguments: [
        ("16:35", ["every day at 16:35", "jeden Tag um 16:35", "tous les jours à 16:35", "todos los días a las 16:35"]),
        ("16:35 mon-fri", ["every weekday at 16:35", "werktags um 16:35", "en semaine à 16:35", "de lunes a viernes a las 16:35"]),
        ("Mon..Fri *-*-* 16:35:00", ["every weekday at 16:35", "werktags um 16:35", "en semaine à 16:35", "de lunes a viernes a las 16:35"]),
        ("07:00 mon,wed,fri", ["every Monday, Wednesday and Friday at 07:00", "jeden Montag, Mittwoch und Freitag um 07:00",
                               "tous les lundis, mercredis et vendredis à 07:00", "todos los lunes, miércoles y viernes a las 07:00"]),
        ("Sat,Sun 09:00", ["every weekend at 09:00", "am Wochenende um 09:00", "le week-end à 09:00", "los fines de semana a las 09:00"]),
        ("*-*-01 09:00", ["on the 1st of every month at 09:00", "am 1. jedes Monats um 09:00", "le 1er de chaque mois à 09:00",
                          "el 1 de cada mes a las 09:00"]),
        ("*-*~01 18:00", ["on the last day of every month at 18:00", "am letzten Tag jedes Monats um 18:00",
                          "le dernier jour de chaque mois à 18:00", "el último día de cada mes a las 18:00"]),
        ("*-12-24 18:00", ["every year on 24 Dec at 18:00", "jedes Jahr am 24.12. um 18:00", "tous les ans le 24 décembre à 18:00",
                           "cada año el 24 de diciembre a las 18:00"]),
        ("2026-12-24 18:00", ["on Thu 24 Dec 2026 at 18:00", "am Do 24. Dez 2026 um 18:00", "le jeudi 24 décembre 2026 à 18:00",
                              "el jueves 24 de diciembre de 2026 a las 18:00"]),
        ("every 25m", ["every 25 minutes", "alle 25 Minuten", "toutes les 25 minutes", "cada 25 minutos"]),
        ("in 1h30m", ["in 1 hour and 30 minutes", "in 1 Stunde und 30 Minuten", "dans 1 heure et 30 minutes", "dentro de 1 hora y 30 minutos"]),
        ("DTSTART:20261127T163500 RRULE:FREQ=MONTHLY;BYDAY=-1FR", ["on the last Friday of every month at 16:35",
         "am letzten Freitag jedes Monats um 16:35", "le dernier vendredi de chaque mois à 16:35", "el último viernes de cada mes a las 16:35"]),
        ("DTSTART:20261201T090000 RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU", ["every 2 weeks on Tuesday at 09:00, from Tue 1 Dec 2026",
         "jeden zweiten Dienstag um 09:00, ab Di 1. Dez 2026", "toutes les 2 semaines le mardi à 09:00, à partir du mardi 1er décembre 2026",
         "cada 2 semanas el martes a las 09:00, desde el martes 1 de diciembre de 2026"]),
        ("DTSTART:20261215T090000 RRULE:FREQ=MONTHLY;INTERVAL=2;BYMONTHDAY=15", ["every 2 months on the 15th at 09:00, from Tue 15 Dec 2026",
         "alle 2 Monate am 15. um 09:00, ab Di 15. Dez 2026", "tous les 2 mois le 15 à 09:00, à partir du mardi 15 décembre 2026",
         "cada 2 meses el 15 a las 09:00, desde el martes 15 de diciembre de 2026"]),
    ])
    func machineRulesAreSaidInWords(_ text: String, _ said: [String]) throws {
        let rule = try Rule(parsing: text)
        for (language, words) in zip(PhraseLanguage.allCases, said) {
            #expect(rule.words(language, zone: Self.berlin) == words)
            #expect(try Phrase.read(words, Self.context(language)).rule == rule, "\(words)")
        }
    }

    @Test(arguments: ["*:0/15", "Mon..Fri *-*-* 08..17:00:00", "DTSTART:20261201T090000 RRULE:FREQ=MONTHLY;BYDAY=MO,TU;BYSETPOS=1",
                      "16:35 Europe/Berlin"])
    func whatWordsDoNotSayIsShownAsWritten(_ text: String) throws {
        #expect(try Rule(parsing: text).words(.english, zone: Self.berlin) == nil)
    }
}

/// Over generated phrases and rules: what is said back reads again as the same rule (the same next
/// times), in both languages, and a phrase read twice says the same words.
@Suite struct PhraseWordsPropertyTests {
    /// A random phrase of the kinds people type, with random numbers (in all four languages).
    static func phrase(_ g: inout SplitMix) -> String {
        let hour = g.below(24), minute = g.below(60), hour12 = 1 + g.below(12)
        let time = "\(hour):\(minute < 10 ? "0" : "")\(minute)"
        let ampm = "\(hour12)\(g.below(2) == 0 ? "am" : "pm")"
        let days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
        let tage = ["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"]
        let jour = ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"]
        let jours = ["lundis", "mardis", "mercredis", "jeudis", "vendredis", "samedis", "dimanches"]
        let mois = ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"]
        let dia = ["lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"]
        let meses = ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let ordinals = ["1st", "2nd", "3rd", "4th"]
        let day = 1 + g.below(28), month = g.below(12)
        let forms: [String] = [
            "tomorrow \(ampm)", "next \(days[g.below(7)]) \(time)", "\(day) \(months[month]) 2027 \(ampm)", "in \(1 + g.below(9)) days at \(time)",
            "every weekday \(time)", "every other \(days[g.below(7)]) \(ampm)", "every \(2 + g.below(8)) days at \(time)",
            "last \(days[g.below(7)]) of the month \(time)", "every \(ordinals[g.below(2)]) and \(ordinals[2 + g.below(2)]) saturday \(time)",
            "\(ordinals[g.below(4)]) of every month \(time)", "every \(days[g.below(7)]) and \(days[g.below(7)]) \(ampm)",
            "every year on \(day) \(months[month]) at \(time)", "every \(2 + g.below(5)) weeks on \(days[g.below(7)]) \(time)",
            "every \(2 + g.below(5)) months \(time)", "every \(5 + g.below(50)) minutes",
            "morgen um \(hour) Uhr", "werktags um \(time)", "jeden zweiten \(tage[g.below(7)]) um \(time)", "alle \(2 + g.below(8)) Tage um \(time)",
            "am letzten Freitag im Monat um \(time)", "am Wochenende um \(time)", "jedes Jahr am \(day).\(month + 1). um \(time)",
            "demain à \(hour)h", "tous les \(jours[g.below(7)]) à \(time)", "le \(day) de chaque mois à \(time)",
            "dans \(1 + g.below(90)) minutes", "toutes les \(2 + g.below(5)) semaines le \(jour[g.below(7)]) à \(time)",
            "le dernier \(jour[g.below(7)]) du mois à \(hour)h\(minute < 10 ? "0" : "")\(minute)", "en semaine à \(time)",
            "tous les ans le \(day) \(mois[month]) à \(time)",
            "mañana a las \(time)", "cada \(dia[g.below(7)]) a las \(time)", "el \(day) de cada mes a las \(time)",
            "dentro de \(1 + g.below(9)) horas", "de lunes a viernes a las \(time)", "el último \(dia[g.below(7)]) de cada mes a las \(time)",
            "cada \(2 + g.below(5)) semanas el \(dia[g.below(7)]) a las \(time)", "cada año el \(day) de \(meses[month]) a las \(time)",
        ]
        return forms[g.below(forms.count)]
    }

    static func next(_ rule: Rule, _ repeats: Bool, after said: Instant, in zone: Zone) -> [Int64] {
        var times: [Int64] = []
        var t = said
        while times.count < 6, let next = rule.nextFire(after: t, anchor: said, repeats: repeats, in: zone) {
            times.append(next.seconds)
            t = next
        }
        return times
    }

    @Test func generatedPhrasesSaidBackReadAsTheSameRule() throws {
        var g = SplitMix(seed: 35)
        var checked = 0
        for _ in 0..<1_000 {
            let text = Self.phrase(&g)
            let zone = [PhraseTests.berlin, try Zone.named("America/New_York"), .utc][g.below(3)]
            for language in PhraseLanguage.allCases {
                let context = PhraseTests.context(language, zone: zone)
                let reading = try Phrase.read(text, context)
                let again = try Phrase.read(reading.words, context)
                let first = Self.next(reading.rule, reading.repeats, after: context.said, in: zone)
                #expect(!first.isEmpty, "\(text): never")
                #expect(Self.next(again.rule, again.repeats, after: context.said, in: zone) == first && again.words == reading.words,
                        "\(text) → \(reading.words) → \(again.words)")
                checked += 1
            }
        }
        #expect(checked == 1_000 * PhraseLanguage.allCases.count)
    }

    /// Machine rules where words say them: the words read again as a phrase fire at the same times.
    @Test func machineRulesSaidInWordsReadAsTheSameTimes() throws {
        var g = SplitMix(seed: 351)
        var said = 0
        for _ in 0..<1_000 {
            let hour = g.below(24), minute = g.below(60)
            let clock = "\(hour < 10 ? "0" : "")\(hour):\(minute < 10 ? "0" : "")\(minute)"
            let days = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
            let text = ["\(clock)", "\(clock) mon-fri", "\(clock) sat,sun", "\(clock) \(days[g.below(7)])",
                        "\(clock) \(days[g.below(7)]),\(days[g.below(7)])", "*-*-\(1 + g.below(28)) \(clock)"][g.below(6)]
            let rule = try Rule(parsing: text)
            for language in PhraseLanguage.allCases {
                guard let words = rule.words(language, zone: PhraseTests.berlin) else { continue }
                let context = PhraseTests.context(language)
                let again = try Phrase.read(words, context)
                #expect(Self.next(again.rule, again.repeats, after: context.said, in: PhraseTests.berlin)
                        == Self.next(rule, true, after: context.said, in: PhraseTests.berlin), "\(text) → \(words)")
                said += 1
            }
        }
        #expect(said > 1_500, "words said for \(said) of 2,000")
    }
}
