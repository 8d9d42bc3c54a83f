// `chime`: notify and notify-send run here; every other command is handed to chime-commands
// (see NotifyTool's Front).
import NotifyTool

Front.main()
