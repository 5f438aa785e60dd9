using IpcBench.Transports.Iceoryx2;

namespace IpcBench.Transports.Tests;

[Collection(nameof(SerialMeasurements))]
public class PortGateTests
{
    [Fact]
    public void Ports_are_freed_exactly_once_and_never_while_the_owner_is_inside()
    {
        for (int round = 0; round < 500; round++)
        {
            int freed = 0, inside = 0, violations = 0;
            var gate = new PortGate(() =>
            {
                if (Volatile.Read(ref inside) != 0)
                {
                    Interlocked.Increment(ref violations);
                }

                Interlocked.Increment(ref freed);
            });
            using var start = new Barrier(2);
            var owner = new Thread(() =>
            {
                start.SignalAndWait();
                for (int i = 0; i < 20_000 && gate.TryEnter(); i++)
                {
                    Volatile.Write(ref inside, 1);
                    if (Volatile.Read(ref freed) != 0)
                    {
                        Interlocked.Increment(ref violations);
                    }

                    Volatile.Write(ref inside, 0);
                    gate.Exit();
                }
            });
            owner.Start();
            start.SignalAndWait();
            Thread.SpinWait(round * 37 % 5000); // close at varying points of the owner's loop
            gate.Close();
            Assert.True(gate.IsClosing);
            Assert.True(owner.Join(TimeSpan.FromSeconds(30)));
            Assert.Equal(0, violations);
            Assert.Equal(1, freed);
            Assert.False(gate.TryEnter());
            gate.Close();
            Assert.Equal(1, freed);
        }
    }

    [Fact]
    public void Closing_an_idle_gate_frees_at_once_and_a_busy_one_when_its_owner_leaves()
    {
        int freed = 0;
        var idle = new PortGate(() => freed++);
        idle.Close();
        Assert.Equal(1, freed);

        var busy = new PortGate(() => freed++);
        Assert.True(busy.TryEnter());
        busy.Close();
        Assert.Equal(1, freed);
        busy.Exit();
        Assert.Equal(2, freed);
        Assert.False(busy.TryEnter());
        Assert.Equal(2, freed);
    }
}
