// Command ferretdb runs FerretDB v1 on its SQLite backend as the embedded, MongoDB-compatible
// database of petstore-gateway. It embeds github.com/FerretDB/FerretDB/ferretdb because
// `go install .../cmd/ferretdb` builds a binary that panics at start (no version.txt).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to listen on (empty: none)")
	listenUnix := flag.String("listen-unix", "", "Unix domain socket to listen on (empty: none)")
	dir := flag.String("dir", ".data", "directory of the SQLite database files")
	exitWithStdin := flag.Bool("exit-with-stdin", false, "stop when standard input closes (the parent process died)")
	logLevel := flag.String("log-level", "warn", "FerretDB log level: debug, info, warn or error")
	flag.Parse()

	abs, err := filepath.Abs(*dir)
	if err != nil {
		log.Fatal(err)
	}
	if err = os.MkdirAll(abs, 0o755); err != nil {
		log.Fatal(err)
	}

	var level slog.Level
	if err = level.UnmarshalText([]byte(*logLevel)); err != nil {
		log.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listen, Unix: *listenUnix},
		Handler:   "sqlite",
		SQLiteURL: "file:" + abs + "/",
		Logger:    logger,
	})
	if err != nil {
		log.Fatal(err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *exitWithStdin {
		// A parent that dies without signalling us still closes our stdin; never outlive it.
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			stop()
		}()
	}

	// The parent process waits for this line before it connects.
	// Over a Unix socket the parent builds the URI from the path it gave (MongoDBURI would put it, unescaped, in the host).
	if *listen == "" {
		fmt.Println("ready unix")
	} else {
		fmt.Println("ready", f.MongoDBURI())
	}
	if err = f.Run(ctx); err != nil && ctx.Err() == nil {
		log.Fatal(err)
	}
}
