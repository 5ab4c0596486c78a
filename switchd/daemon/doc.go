// Package daemon is switchd's file side, for cmd/switchd and for the tools
// that write switch files (testbed nodes): the TOML schema of a switchd file
// (Config and its tables; configs/switch-*.toml), its defaults
// (DefaultConfig), reading and checking it with every error at its file,
// line and key (LoadConfig, DecodeConfig, Config.Validate), the daemon's own
// settings the engine never sees (lcore mode and layout, EAL arguments,
// mempool and ring sizes, output files, devices: IsPCIAddress, DeviceName,
// KernelRxFrames), and the turn from a file into the value the engine takes
// (Config.Spec) and back (ConfigOf).
//
// Package switchd, the engine, takes a switchd.Spec and never a file
// (docs/architecture.md, "engines take specs, daemons read files"): the
// spec holds MACs as wire.MAC, routes as address, length and port indices,
// times in nanoseconds, and each port's scheme parameters already decoded.
// Config.Spec parses the text, resolves port names to indices, adds an
// af_packet port's kernel ring to its derived PFC headroom, decodes each
// port's [cc.params.<scheme>] table over the scheme's defaults for that
// port's link, and checks the rest with switchd.Spec.CheckWith, so that an
// error in a file names its line whichever side finds it.
package daemon
