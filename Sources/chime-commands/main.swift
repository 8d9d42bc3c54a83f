// `chime-commands`: every command of chime. Installed in libexec and started by `chime` (which runs
// `notify` itself), with the arguments chime was given.
import ChimeCommands

Chime.main()
