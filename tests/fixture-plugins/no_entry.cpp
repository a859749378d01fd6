// Exports something, but not the plugin entry.
extern "C" {
__attribute__((visibility("default"))) int uniperf_something_else = 1;
}
