// Add or edit an alarm: time, weekdays (or, for what they cannot say, When: a phrase or any rule,
// with the words understood and the next three times as one types), name, sound (with a preview played the way the alarm will
// sound: the daemon's PlaySound, with its volume and fade), volume, fade-in, whether it insists on
// being heard, how long it rings, snooze length, waking the machine (greyed, with the reason, where
// it cannot), and do-not-disturb.
import AlarmsModel
import ChimeCenter
import DBus
import Gtk
import Notifications
import Timekeeping

final class AlarmDialog {
    private let dialog: Window
    private unowned let owner: MainWindow
    private let identifier: String?
    private var alarm: ClockAlarm
    var onClosed: () -> Void = {}

    private let hour = SpinButton(range: 0...23, step: 1, name: tr("Hour"))
    private let minute = SpinButton(range: 0...59, step: 1, name: tr("Minute"))
    private var dayButtons: [ToggleButton] = []
    private let clock = Box(vertical: false, spacing: 6)
    /// (On a phone, seven 44 px days fit 360 px only 2 px apart.)
    private let days = Box(vertical: false, spacing: Touch.wanted ? 2 : 6)
    /// When, as a person says it (`every other tuesday 9am`): it takes the clock's and the days' place.
    private let when = EntryRow(title: tr("Say when"))
    /// What When was understood as: the words and the next three times, or why it cannot be read.
    private let understood = Label()
    private let name = EntryRow(title: tr("Name"))
    /// The sound: a row that opens to the choices, one radio button each.
    private let sound = ExpanderRow(title: tr("Sound"))
    private var soundButtons: [CheckButton] = []
    private var soundRows: [ActionRow] = []
    private var chosenSound = 0
    private let preview = Button(icon: "media-playback-start-symbolic", name: tr("Preview the sound"))
    private let ring: ComboRow
    private let snooze: ComboRow
    private let volume: ComboRow
    private let fade: ComboRow
    private let insistSwitch = Switch(name: nil)
    private let insistRow = ActionRow(title: tr("Even when muted"))
    private let wakeSwitch = Switch(name: nil)
    private let wakeRow = ActionRow(title: tr("Wake the computer"))
    private let doNotDisturb: ComboRow
    /// What a day off (a holiday of the alarm file's calendars) does to it, and the notice before it.
    private let onHoliday: ComboRow
    private let notice: ComboRow
    /// Where it lives: this computer, or a calendar chime writes to (and so on every machine that
    /// syncs it); an edited alarm stays where it lives.
    private let livesOn: ComboRow
    private let calendars: [String]
    private let problem = Label()
    private let save = Button(label: tr("_Save"))
    private var chooser: FileChooser?
    /// The preview playing (the daemon's number for it), stopped when the dialog closes.
    private var previewPlay: UInt32?

    /// The sound choices: none, chime's default, the theme's sounds, and a file (its path).
    private var soundChoices: [Sound?]
    /// The notice choices (and an edited alarm's own).
    private var noticeChoices = AlarmDialog.noticeChoices
    private static let ringChoices: [TimeSpan] = [.zero, .seconds(60), .seconds(300), .seconds(600), .seconds(900), .seconds(1800)]
    private static let snoozeChoices: [TimeSpan] = [60, 300, 540, 600, 900, 1200, 1800].map { .seconds($0) }
    private static let volumeChoices = [100, 90, 80, 70, 60, 50, 40, 30, 20, 10]
    private static let fadeChoices: [TimeSpan] = [0, 10, 30, 60, 120, 300].map { .seconds($0) }
    private static let doNotDisturbChoices: [DoNotDisturbPolicy] = [.breakThrough, .defer, .silent]
    private static let holidayChoices: [HolidayPolicy] = [.ring, .skip, .before, .after]
    private static let noticeChoices: [TimeSpan?] = [nil] + [900, 1800, 3600, 7200, 43_200, 86_400].map { .seconds($0) }

    init(window owner: MainWindow, editing identifier: String?, alarm: ClockAlarm) {
        self.owner = owner
        self.identifier = identifier
        self.alarm = alarm
        dialog = Window(dialogOver: owner.window)
        dialog.title = identifier == nil ? tr("New Alarm") : tr("Edit Alarm")
        let size = MainWindow.dialogSize(420, 740)
        dialog.setDefaultSize(width: size.width, height: size.height)

        let themeSounds = alarmSoundNames().filter { $0 != Sound.defaultName }
        soundChoices = [nil, .default] + themeSounds.map { .named($0) }
        // The alarm's own sound stays choosable (a file, or a theme sound not in the short list).
        if let own = alarm.sound, !soundChoices.contains(own) { soundChoices.append(own) }
        ring = ComboRow(title: tr("Ring for"), choices: Self.ringChoices.map { $0 == .zero ? tr("Once") : durationWords($0) })
        snooze = ComboRow(title: tr("Snooze for"), choices: Self.snoozeChoices.map(durationWords))
        volume = ComboRow(title: tr("Volume"), choices: Self.volumeChoices.map { "\($0) %" })
        fade = ComboRow(title: tr("Fade in"), choices: Self.fadeChoices.map { $0 == .zero ? tr("Off") : durationWords($0) })
        doNotDisturb = ComboRow(title: tr("During Do Not Disturb"),
                                choices: [tr("Ring anyway"), tr("Wait until it ends"), tr("Show without sound")])
        onHoliday = ComboRow(title: tr("On a Holiday"), choices: [tr("Ring"), tr("Skip"), tr("Ring the working day before"),
                                                                  tr("Ring the working day after")])
        notice = ComboRow(title: tr("Notice Before"), choices: Self.noticeChoices.map { $0.map(durationWords) ?? tr("None") })
        var calendars = owner.writableCalendars
        if let own = alarm.calendar, !calendars.contains(own) { calendars.append(own) }
        self.calendars = calendars
        livesOn = ComboRow(title: tr("Lives On"), choices: [tr("This Computer")] + calendars.map { tr("The calendar %s", $0) })
        build()
        fill()
    }

    private func build() {
        let header = HeaderBar()
        header.hidesWindowButtons()
        let cancel = Button(label: tr("_Cancel"))
        cancel.onClick { [unowned self] in dialog.close() }
        save.addClass("suggested-action")
        save.onClick { [unowned self] in commit() }
        header.packStart(cancel)
        header.packEnd(save)
        dialog.setDefault(save)
        dialog.addAction("save") { [unowned self] in commit() }
        dialog.addShortcut("<Control>Return", action: "win.save")
        dialog.addShortcut("<Control>s", action: "win.save")

        // The time, as a clock shows it.
        clock.horizontalAlignment = .center
        for spin in [hour, minute] {
            spin.vertical()
            spin.wrapsAround = true
            spin.twoDigits()
            spin.addClass("title-1")
        }
        let colon = Label(":")
        colon.addClass("title-1")
        clock.append(hour)
        clock.append(colon)
        clock.append(minute)
        clock.margins(12, 0, 12, 0)

        // The days, Monday first.
        days.horizontalAlignment = .center
        for index in 0..<7 {
            let button = ToggleButton(label: Weekdays.shortName(index), name: Weekdays.fullName(index))
            button.addClass("circular")
            dayButtons.append(button)
            days.append(button)
        }
        let repeatGroup = PreferencesGroup(title: tr("Repeat"), description: tr("No day chosen: once, at the next time the clock shows it; or say when in words"))
        repeatGroup.add(days)
        // For what the clock and the days cannot say: a phrase or any rule chime reads
        // (“every other tuesday 9am”, “last friday of the month 16:35”, “jeden zweiten Dienstag um 9:00”).
        repeatGroup.add(when)
        understood.wraps = true
        understood.xAlignment = 0
        understood.isVisible = false
        understood.margins(6, 6, 0, 6)
        repeatGroup.add(understood)
        when.onChange(of: "text") { [unowned self] in refreshWhen() }

        let nameGroup = PreferencesGroup()
        nameGroup.add(name)

        preview.addClass("flat")
        preview.verticalAlignment = .center
        preview.onClick { [unowned self] in playPreview() }
        let chooseFile = Button(icon: "document-open-symbolic", name: tr("Choose a sound file"))
        chooseFile.addClass("flat")
        chooseFile.verticalAlignment = .center
        chooseFile.onClick { [unowned self] in chooseSoundFile() }
        let soundGroup = PreferencesGroup(title: tr("Sound"))
        soundGroup.add(sound)
        soundGroup.setHeaderSuffix(Self.pair(preview, chooseFile))
        soundGroup.add(volume)
        soundGroup.add(fade)
        insistRow.subtitle = tr("Unmutes and raises the sound output while it rings, then puts it back")
        insistRow.addSuffix(insistSwitch)
        insistRow.activates(insistSwitch)
        soundGroup.add(insistRow)
        soundGroup.add(ring)
        soundGroup.add(snooze)

        wakeRow.addSuffix(wakeSwitch)
        wakeRow.activates(wakeSwitch)
        let more = PreferencesGroup(title: tr("When"))
        more.add(wakeRow)
        more.add(doNotDisturb)
        onHoliday.subtitle = tr("Days off from the holiday calendars the alarm file follows")
        more.add(onHoliday)
        notice.subtitle = tr("A quiet popup with Skip this one")
        more.add(notice)
        // Where it lives, where the alarm file names calendars chime writes to.
        livesOn.subtitle = identifier == nil ? tr("A calendar carries it to your other machines through their sync")
            : tr("Where it was set; it stays there")
        livesOn.isSensitive = identifier == nil
        livesOn.isVisible = !calendars.isEmpty
        more.add(livesOn)

        problem.wraps = true
        problem.addClass("error")
        problem.isVisible = false
        problem.margins(0, 12, 0, 12)

        let page = PreferencesPage()
        let timeGroup = PreferencesGroup()
        timeGroup.add(clock)
        page.add(timeGroup)
        page.add(repeatGroup)
        page.add(nameGroup)
        page.add(soundGroup)
        page.add(more)
        let body = Box(vertical: true)
        body.append(header)
        body.append(problem)
        page.expandsVertically = true
        body.append(page)
        dialog.setContent(body)
        dialog.onCloseRequest { [unowned self] in
            if let previewPlay { owner.link?.later(Scheduler1.stopSound(previewPlay)) { _ in } }
            onClosed()
            return false
        }
        // Where this machine cannot wake for an alarm, the switch is greyed and says why.
        wakeRow.subtitle = tr("From suspend, where the machine allows it")
        owner.send(tr("Reading the daemon's status"), Scheduler1.status, reading: true) { [weak self] status in
            guard let self, status.wakeMethod == "none" else { return }
            wakeSwitch.isOn = false
            wakeSwitch.isSensitive = false
            wakeRow.isSensitive = false
            wakeRow.subtitle = status.wake
        }
    }

    private static func pair(_ a: Widget, _ b: Widget) -> Box {
        let box = Box(vertical: false, spacing: 0)
        box.append(a)
        box.append(b)
        return box
    }

    private func fill() {
        hour.value = Double(alarm.hour)
        minute.value = Double(alarm.minute)
        for (index, button) in dayButtons.enumerated() { button.isActive = alarm.days.contains(.day(index)) }
        name.text = alarm.label
        refreshSoundChoices()
        ring.selected = Self.ringChoices.firstIndex(of: alarm.ring) ?? Self.nearest(alarm.ring, in: Self.ringChoices)
        snooze.selected = Self.snoozeChoices.firstIndex(of: alarm.snooze) ?? Self.nearest(alarm.snooze, in: Self.snoozeChoices)
        volume.selected = Self.volumeChoices.firstIndex(of: alarm.volume)
            ?? Self.volumeChoices.indices.min { abs(Self.volumeChoices[$0] - alarm.volume) < abs(Self.volumeChoices[$1] - alarm.volume) } ?? 0
        fade.selected = Self.fadeChoices.firstIndex(of: alarm.fade) ?? Self.nearest(alarm.fade, in: Self.fadeChoices)
        insistSwitch.isOn = alarm.insist
        wakeSwitch.isOn = alarm.wake
        doNotDisturb.selected = Self.doNotDisturbChoices.firstIndex(of: alarm.doNotDisturb) ?? 0
        onHoliday.selected = Self.holidayChoices.firstIndex(of: alarm.onHoliday) ?? 0
        // An edited alarm's own notice, when it is not one of the choices, is kept as one.
        if let own = alarm.notice, !Self.noticeChoices.contains(own) {
            noticeChoices.append(own)
            notice.append(durationWords(own))
        }
        notice.selected = noticeChoices.firstIndex(of: alarm.notice) ?? 0
        let lives = identifier == nil ? owner.defaultCalendar : alarm.calendar
        livesOn.selected = lives.flatMap { calendars.firstIndex(of: $0) }.map { $0 + 1 } ?? 0
        when.text = alarm.when
        refreshWhen()
    }

    /// Says what When is understood as, live; while it says something, the clock and the days are
    /// not what the alarm follows, and are greyed.
    private func refreshWhen() {
        var alarm = self.alarm
        alarm.when = when.text
        let preview = alarm.whenPreview(now: WallClock.system.now(), language: .ofUser, twelveHourClock: PhraseLanguage.userHasTwelveHourClock)
        clock.isSensitive = preview == nil
        days.isSensitive = preview == nil
        guard let preview else {
            understood.isVisible = false
            return
        }
        understood.text = preview.text(zone: owner.zone)
        if case .problem = preview { understood.addClass("error") } else { understood.removeClass("error") }
        understood.isVisible = true
    }

    private static func words(_ choice: Sound?) -> String {
        switch choice {
        case nil: tr("None")
        case .default?: tr("Alarm clock (chime's own)")
        case .named(let name)?: name.replacing("-", with: " ")
        case .file(let path)?: String(path.split(separator: "/").last ?? "")
        }
    }

    /// One radio row per choice; the chosen one is the alarm's.
    private func refreshSoundChoices() {
        for row in soundRows { sound.remove(row) }
        soundRows.removeAll()
        soundButtons.removeAll()
        chosenSound = soundChoices.firstIndex(of: alarm.sound) ?? 1
        for (index, choice) in soundChoices.enumerated() {
            let row = ActionRow(title: Self.words(choice))
            let radio = CheckButton()
            if let first = soundButtons.first { radio.join(first) }
            radio.isActive = index == chosenSound
            radio.onToggle { [unowned self, unowned radio] in
                if radio.isActive { choose(index) }
            }
            row.addPrefix(radio)
            row.activates(radio)
            sound.add(row)
            soundRows.append(row)
            soundButtons.append(radio)
        }
        choose(chosenSound)
    }

    private func choose(_ index: Int) {
        chosenSound = index
        sound.subtitle = Self.words(soundChoices[index])
        preview.isSensitive = index > 0
        ring.isSensitive = index > 0
    }

    private static func nearest(_ span: TimeSpan, in choices: [TimeSpan]) -> Int {
        choices.indices.min { abs(choices[$0].seconds - span.seconds) < abs(choices[$1].seconds - span.seconds) } ?? 0
    }

    func present() {
        dialog.present()
        hour.grabFocus()
    }

    /// What the dialog says now.
    private func read() -> ClockAlarm {
        var alarm = self.alarm
        alarm.hour = hour.intValue
        alarm.minute = minute.intValue
        alarm.days = Weekdays(rawValue: dayButtons.enumerated().reduce(0) { $0 | ($1.element.isActive ? 1 << UInt8($1.offset) : 0) })
        alarm.label = name.text
        alarm.when = when.text
        alarm.sound = soundChoices[chosenSound]
        alarm.ring = Self.ringChoices[min(ring.selected, Self.ringChoices.count - 1)]
        alarm.snooze = Self.snoozeChoices[min(snooze.selected, Self.snoozeChoices.count - 1)]
        alarm.volume = Self.volumeChoices[min(volume.selected, Self.volumeChoices.count - 1)]
        alarm.fade = Self.fadeChoices[min(fade.selected, Self.fadeChoices.count - 1)]
        alarm.insist = insistSwitch.isOn
        alarm.wake = wakeSwitch.isOn && wakeSwitch.isSensitive
        alarm.doNotDisturb = Self.doNotDisturbChoices[min(doNotDisturb.selected, 2)]
        alarm.onHoliday = Self.holidayChoices[min(onHoliday.selected, 3)]
        alarm.notice = noticeChoices[min(notice.selected, noticeChoices.count - 1)]
        alarm.calendar = livesOn.selected > 0 && livesOn.selected <= calendars.count ? calendars[livesOn.selected - 1] : nil
        return alarm
    }

    private func commit() {
        let alarm = read()
        let request: NotificationRequest
        do throws(RequestError) {
            request = try alarm.request(identifier: identifier, now: WallClock.system.now(), zone: owner.zone,
                                        language: .ofUser, twelveHourClock: PhraseLanguage.userHasTwelveHourClock)
        } catch {
            show(problem: error.message)
            return
        }
        // Sent without waiting: Save stays pressed until the daemon answers; the dialog closes once
        // the alarm is the daemon's, or stays and says why not.
        save.isSensitive = false
        owner.link?.later(Scheduler1.add(request, calendar: alarm.calendar)) { [weak self] result in
            guard let self else { return }
            save.isSensitive = true
            switch result {
            case .success:
                if identifier == nil {
                    owner.toast(alarm.when.isEmpty ? tr("Alarm set for %s", alarm.timeText) : tr("Alarm set: %s", alarm.when))
                }
                dialog.close()
            case .failure(let error):
                show(problem: describe(error))
            }
        }
    }

    private func show(problem text: String) {
        problem.text = text
        problem.isVisible = true
    }

    private func playPreview() {
        guard let choice = soundChoices[chosenSound] else { return }
        let text = switch choice {
        case .default: "default"
        case .named(let name): name
        case .file(let path): path
        }
        // As the alarm will sound: its volume, and its fade (looping long enough to hear it rise).
        let chosen = read()
        let play = chosen.fade > .zero
            ? Scheduler1.playSound(text, volume: chosen.volume, fade: chosen.fade, for: chosen.fade + .seconds(3))
            : Scheduler1.playSound(text, volume: chosen.volume)
        owner.link?.later(play) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let started):
                previewPlay = started.play
                problem.isVisible = false
            case .failure(let error): show(problem: describe(error))
            }
        }
    }

    private func chooseSoundFile() {
        let chooser = FileChooser(title: tr("Sound Files"), over: dialog, accept: tr("_Choose"), mimeTypes: ["audio/*"])
        self.chooser = chooser
        chooser.show { [unowned self] path in
            guard let path else { return }
            alarm = read()
            alarm.sound = .file(path)
            if !soundChoices.contains(alarm.sound) { soundChoices.append(alarm.sound) }
            refreshSoundChoices()
        }
    }
}
