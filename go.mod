module github.com/ccbed/ccbed

go 1.26

require github.com/google/gopacket v1.1.19 // indirect
