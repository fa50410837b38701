package cli

import (
	"github.com/spf13/cobra"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/engine"
)

// instanceSelf is the instance an offline decision (`mandate check`,
// `mandate policy test`) is made for: the data directory, listen address
// and protected paths `mandate serve` would have, with the same defaults,
// so the self-protection rules see what a running server's see.
type instanceSelf struct {
	data, listen string
	protect      []string
}

func (f *instanceSelf) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.data, "data", DefaultData, "the server's data directory, which agents' calls must not touch (as mandate serve --data)")
	cmd.Flags().StringVar(&f.listen, "listen", DefaultListen, "the server's listen address, which agents' calls must not reach (as mandate serve --listen; empty: none)")
	cmd.Flags().StringArrayVar(&f.protect, "protect", nil, "another path agents' calls must not touch (as mandate serve --protect; repeatable)")
}

// offline is the input builder for this instance with its policy
// directories and catalogs.
func (f *instanceSelf) offline(policyDirs, catalogs []string) (*engine.Offline, error) {
	return engine.NewOffline(app.SelfFacts(app.Config{DataDir: f.data, Listen: f.listen, PolicyDirs: policyDirs, CatalogFiles: catalogs, Protect: f.protect}))
}
