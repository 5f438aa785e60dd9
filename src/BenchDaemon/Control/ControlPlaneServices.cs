namespace IpcBench.Daemon.Control;

/// <summary>
/// The full names of the daemon's own gRPC services, as their .proto files declare them (ControlPlaneServicesTests holds
/// them to the descriptors). Written out because the generated code keeps its names private and reading a descriptor
/// builds the reflection tables of its file and of every file it imports, which the daemon otherwise never needs
/// before a grpcurl asks it to describe itself.
/// </summary>
public static class ControlPlaneServices
{
    public const string BenchControl = "ipcbench.v1.BenchControl";

    public const string AgentLink = "ipcbench.v1.AgentLink";
}
