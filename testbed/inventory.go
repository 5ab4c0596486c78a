package testbed

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strings"
)

// Inventory is an Ansible INI inventory as testbed nodes reads it: the
// groups "switch" (one node) and "hosts" (one node per experiment host,
// named as the experiment names its hosts: h0, h1, ...), each node's
// variables, and the variables of the groups "switch", "hosts", "ccbed" and
// "all" (a node's own variables win over its group's, then "ccbed"'s, then
// "all"'s). Other groups and variables are kept for Ansible and ignored here.
type Inventory struct {
	// Path is the file the inventory was read from.
	Path string
	// Groups maps a group name to its nodes, in file order.
	Groups map[string][]string
	// Vars maps a node name to its own variables.
	Vars map[string]map[string]string
	// GroupVars maps a group name to the variables of its [group:vars]
	// section.
	GroupVars map[string]map[string]string
	// lines records the line where each node was first named, for errors.
	lines map[string]int
}

// Placeholder starts every value testbed nodes cannot know and writes into a
// template inventory for the user to fill in; -inventory refuses a file
// that still has one.
const Placeholder = "FILL_IN_"

// ReadInventory parses the INI inventory at path: "[group]" sections of
// "node key=value ..." lines, "[group:vars]" sections of "key=value" lines and
// "[group:children]" sections (kept as groups of groups). Values may be
// quoted with ' or ". Comments start with # or ;.
func ReadInventory(path string) (*Inventory, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	inv := &Inventory{Path: path, Groups: map[string][]string{}, Vars: map[string]map[string]string{},
		GroupVars: map[string]map[string]string{}, lines: map[string]int{}}
	sc := bufio.NewScanner(f)
	section, kind := "ungrouped", ""
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			if !strings.HasSuffix(line, "]") {
				return nil, fmt.Errorf("%s:%d: section %q: want [group], [group:vars] or [group:children]", path, n, line)
			}
			section, kind, _ = strings.Cut(line[1:len(line)-1], ":")
			if kind != "" && kind != "vars" && kind != "children" {
				return nil, fmt.Errorf("%s:%d: section %q: want [group], [group:vars] or [group:children]", path, n, line)
			}
			if _, ok := inv.Groups[section]; !ok {
				inv.Groups[section] = nil
			}
			continue
		}
		words, err := splitWords(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		switch kind {
		case "vars":
			// "key=value" or "key = value".
			kv := strings.Join(words, "")
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf("%s:%d: want key=value in [%s:vars], got %q", path, n, section, line)
			}
			if inv.GroupVars[section] == nil {
				inv.GroupVars[section] = map[string]string{}
			}
			inv.GroupVars[section][k] = v
		case "children":
			inv.Groups[section] = append(inv.Groups[section], words[0])
		default:
			node := words[0]
			inv.Groups[section] = append(inv.Groups[section], node)
			if _, ok := inv.lines[node]; !ok {
				inv.lines[node] = n
			}
			if inv.Vars[node] == nil {
				inv.Vars[node] = map[string]string{}
			}
			for _, w := range words[1:] {
				k, v, ok := strings.Cut(w, "=")
				if !ok || k == "" {
					return nil, fmt.Errorf("%s:%d: node %s: want key=value, got %q", path, n, node, w)
				}
				inv.Vars[node][k] = v
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return inv, nil
}

// splitWords splits s at blanks, honouring '...' and "..." quotes (which it
// removes) as Ansible's INI inventory does.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

// Var is node's variable key as Ansible would resolve it among the groups
// testbed nodes knows (the node's own, its group's, "ccbed", "all"), and
// whether it is set.
func (inv *Inventory) Var(node, group, key string) (string, bool) {
	for _, m := range []map[string]string{inv.Vars[node], inv.GroupVars[group], inv.GroupVars["ccbed"], inv.GroupVars["all"]} {
		if v, ok := m[key]; ok {
			return v, true
		}
	}
	return "", false
}

// errorf is an error about node, naming the file and the node's line.
func (inv *Inventory) errorf(node, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s: %s", inv.Path, inv.lines[node], node, fmt.Sprintf(format, args...))
}

// PlaybookGroup is the group the generated playbook runs on (hosts: ccbed):
// every node of the groups "switch" and "hosts" must be in it.
const PlaybookGroup = "ccbed"

// members are the nodes of group, through its [group:children] (a name that
// is a group is expanded, once).
func (inv *Inventory) members(group string, seen map[string]bool) map[string]bool {
	out := map[string]bool{}
	if seen[group] {
		return out
	}
	seen[group] = true
	for _, n := range inv.Groups[group] {
		if _, isGroup := inv.Groups[n]; isGroup {
			for m := range inv.members(n, seen) {
				out[m] = true
			}
			continue
		}
		out[n] = true
	}
	return out
}

// CheckPlaybookHosts is an error naming what is missing when the generated
// playbook, which runs on PlaybookGroup and tells the switch by the group
// "switch", would not run on every node of the groups "switch" and
// "hosts": a hand-written inventory without [ccbed:children] would
// otherwise run a playbook that matches no host and exits 0.
func (inv *Inventory) CheckPlaybookHosts() error {
	if _, ok := inv.Groups["switch"]; !ok {
		return fmt.Errorf("%s: no [switch] group: the playbook tells the switch node by it", inv.Path)
	}
	if _, ok := inv.Groups["hosts"]; !ok {
		return fmt.Errorf("%s: no [hosts] group: the playbook runs hostd on its nodes", inv.Path)
	}
	if _, ok := inv.Groups[PlaybookGroup]; !ok {
		return fmt.Errorf("%s: no group %s: the playbook runs on hosts: %s; add\n[%s:children]\nswitch\nhosts",
			inv.Path, PlaybookGroup, PlaybookGroup, PlaybookGroup)
	}
	in := inv.members(PlaybookGroup, map[string]bool{})
	var missing []string
	for _, g := range []string{"switch", "hosts"} {
		for n := range inv.members(g, map[string]bool{}) {
			if !in[n] {
				missing = append(missing, n)
			}
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("%s: group %s (the playbook's hosts) does not hold %s: add the groups switch and hosts to [%s:children]",
			inv.Path, PlaybookGroup, strings.Join(missing, ", "), PlaybookGroup)
	}
	return nil
}
