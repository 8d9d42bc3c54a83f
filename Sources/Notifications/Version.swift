/// chime's version: the one place it is written down (every program of the package and the daemon say it).
public let chimeVersion = "0.2.0"
