// The store keeps the Linux-only engine's records; so are its tests.
[assembly: System.Runtime.Versioning.SupportedOSPlatform("linux")]
