package partconf

// MaxFileSize bounds a partitions.conf ibkey reads. OpenSM reads the file line by line
// with no limit of its own (osm_prtn_config.c: fgets into a 1024-byte buffer), so the
// bound is about ibkey's memory, not OpenSM's: well above the largest real files (a
// few MB for tens of thousands of ports), and past it a clear error instead of an
// out-of-memory death.
const MaxFileSize = 512 << 20
