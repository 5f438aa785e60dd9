// The metrics read /proc and the engine's records: Linux only, as the daemon is.
[assembly: System.Runtime.Versioning.SupportedOSPlatform("linux")]
