import ChimeCommands

Chime.main()
