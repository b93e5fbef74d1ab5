//go:build ibkey_static || !linux || !(amd64 || arm64)

package verbs

// Available is false: this build has no run-time loader for libibverbs.
const Available = false

// Lib is an opened libibverbs; in this build it cannot be opened.
type Lib struct{}

// Device is an opened verbs device.
type Device struct{ Name string }

// Open reports that this build cannot load libibverbs.
func Open() (*Lib, error) {
	return nil, &UnavailableError{Reason: staticReason}
}

const staticReason = "this ibkey is the static flavour (built with -tags ibkey_static or for a platform without purego): it cannot load libibverbs"

// DeviceNames implements the loaded API; unreachable in this build.
func (*Lib) DeviceNames() ([]string, error) { return nil, &UnavailableError{Reason: staticReason} }

// OpenDevice implements the loaded API; unreachable in this build.
func (*Lib) OpenDevice(string) (*Device, error) {
	return nil, &UnavailableError{Reason: staticReason}
}

// Close implements the loaded API.
func (*Lib) Close() error { return nil }

// QueryPort implements the loaded API; unreachable in this build.
func (*Device) QueryPort(int) (PortAttr, error) {
	return PortAttr{}, &UnavailableError{Reason: staticReason}
}

// QueryDevice implements the loaded API; unreachable in this build.
func (*Device) QueryDevice() (DeviceAttr, error) {
	return DeviceAttr{}, &UnavailableError{Reason: staticReason}
}

// QueryPKey implements the loaded API; unreachable in this build.
func (*Device) QueryPKey(int, int) (uint16, error) {
	return 0, &UnavailableError{Reason: staticReason}
}

// Close implements the loaded API.
func (*Device) Close() error { return nil }
