// Package archtest holds the tests that keep ccbed's layers apart: engines
// take specs, daemons read files (docs/architecture.md). It has no code of
// its own beyond this comment; its tests read the module's sources as text
// (go/parser), so they need neither a build of the packages nor the go
// command.
package archtest
