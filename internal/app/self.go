package app

import (
	"net"
	"os"
	"path/filepath"
	"slices"

	"github.com/mandate-dev/mandate/internal/policy"
)

// loopbackNames are the ways a command can spell "this machine" and still
// reach a service bound to the loopback address: names, the IPv4 shorthand
// and numeric forms the C resolver accepts, IPv4-mapped IPv6, and the
// wildcard addresses, which connect to the local host on Linux.
var loopbackNames = []string{
	"127.0.0.1", "localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback",
	"::1", "::ffff:127.0.0.1", "127.1", "127.0.1", "2130706433", "0x7f000001", "0x7f.0.0.1", "0177.0.0.1",
	"0.0.0.0", "0", "::",
}

// SelfFacts is the footprint of an instance with this configuration, for
// the built-in self-protection rules: the addresses its API is reachable
// at (when Listen is set) and the files that are its own — data directory,
// policy directories, catalogs, the Protect paths and the user's Mandate
// configuration directory (where the hook's token lives by default).
func SelfFacts(cfg Config) policy.SelfFacts {
	var f policy.SelfFacts
	if host, port, err := net.SplitHostPort(cfg.Listen); err == nil && port != "" && port != "0" {
		for _, h := range listenHosts(host) {
			f.Hosts = append(f.Hosts, h)
			f.Addresses = append(f.Addresses, net.JoinHostPort(h, port))
		}
		f.Ports = []string{port}
	}
	var paths []string
	if cfg.DataDir != "" {
		paths = append(paths, cfg.DataDir)
	}
	paths = append(paths, cfg.PolicyDirs...)
	paths = append(paths, cfg.CatalogFiles...)
	paths = append(paths, cfg.Protect...)
	if dir, err := os.UserConfigDir(); err == nil {
		paths = append(paths, filepath.Join(dir, "mandate"))
	}
	home, _ := os.UserHomeDir()
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		// The root or the home directory itself would put everything an
		// agent does out of bounds: a misconfiguration, not protection.
		if err != nil || abs == "/" || abs == home {
			continue
		}
		f.Paths = appendNew(f.Paths, abs)
		// A path reached through a symbolic link is protected under both
		// names.
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			f.Paths = appendNew(f.Paths, real)
		}
	}
	return f
}

// listenHosts are the hosts a client on this machine can use to reach a
// listener bound to host.
func listenHosts(host string) []string {
	hosts := []string{}
	if host != "" {
		hosts = append(hosts, host)
	}
	ip := net.ParseIP(host)
	switch {
	case host == "" || (ip != nil && ip.IsUnspecified()):
		// Bound to every interface: every name and address of the machine.
		for _, h := range loopbackNames {
			hosts = appendNew(hosts, h)
		}
		if name, err := os.Hostname(); err == nil && name != "" {
			hosts = appendNew(hosts, name)
		}
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok {
					hosts = appendNew(hosts, n.IP.String())
				}
			}
		}
	case host == "localhost" || (ip != nil && ip.IsLoopback()):
		for _, h := range loopbackNames {
			hosts = appendNew(hosts, h)
		}
	default:
		if name, err := os.Hostname(); err == nil && name != "" {
			hosts = appendNew(hosts, name)
		}
	}
	return hosts
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
