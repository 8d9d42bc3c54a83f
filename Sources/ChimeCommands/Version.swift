/// chime's version: the one place it is written down.
let chimeVersion = "0.1.0"
