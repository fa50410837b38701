// Kinds of sender a user names by role ("my bank"): the words a sender
// condition on the role holds (senders.yaml).

package mandate

import (
	_ "embed"
	"fmt"
	"sync"

	"github.com/mandate-dev/mandate/internal/datafile"
	"github.com/mandate-dev/mandate/internal/fold"
)

const sendersFile = "builtin:senders.yaml"

//go:embed senders.yaml
var sendersData []byte

// senderRoleWords is one role of senders.yaml.
type senderRoleWords struct {
	Names   []string `yaml:"names"`
	From    []string `yaml:"from"`
	NotFrom []string `yaml:"not_from"`
}

// loadSenderRoles indexes the roles by the folded words that name them.
var loadSenderRoles = sync.OnceValues(func() (map[string]*senderRoleWords, error) {
	var roles map[string]*senderRoleWords
	if err := datafile.Load(sendersFile, sendersData, &roles); err != nil {
		return nil, err
	}
	byName := map[string]*senderRoleWords{}
	for role, r := range roles {
		if len(r.Names) == 0 || len(r.From) == 0 || len(r.NotFrom) == 0 {
			return nil, fmt.Errorf("%s: %s: needs names, from and not_from", sendersFile, role)
		}
		for _, n := range r.Names {
			byName[fold.String(n)] = r
		}
	}
	return byName, nil
})

// senderRole is the role a folded word names ("bank"), or nil.
func senderRole(word string) *senderRoleWords {
	roles, err := loadSenderRoles()
	if err != nil {
		return nil
	}
	return roles[word]
}
