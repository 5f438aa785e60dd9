// The store keeps what the engine (Linux only) records; the daemon runs on Linux alone.
[assembly: System.Runtime.Versioning.SupportedOSPlatform("linux")]
