module github.com/ccbed/ccbed

go 1.26

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/google/gopacket v1.1.19
)

require (
	golang.org/x/net v0.0.0-20190620200207-3b0461eec859 // indirect
	golang.org/x/sys v0.0.0-20190412213103-97732733099d // indirect
)
