namespace IpcBench.Iceoryx2.Tests;

public class ErrorTests
{
    private static PublishSubscribeOptions Options(int size = 128, int maxPublishers = 1, int maxSubscribers = 2) => new()
    {
        MaxMessageSize = size,
        MaxPublishers = maxPublishers,
        MaxSubscribers = maxSubscribers,
        MaxNodes = 8,
        SubscriberBufferSize = 4,
        DeliveryMode = DeliveryMode.NoLoss,
    };

    [Iceoryx2Fact]
    public void Payload_above_the_maximum_is_a_clear_exception()
    {
        string service = TestNames.UniqueService("too-large");
        using var node = Iceoryx2Node.Create();
        using var publisher = node.CreatePublisher(service, Options(size: 128));

        var ex = Assert.Throws<Iceoryx2Exception>(() => publisher.Loan(129));
        Assert.Equal(Iceoryx2ErrorCode.PayloadTooLarge, ex.ErrorCode);
        Assert.Contains("129", ex.Message);
        Assert.Contains("128", ex.Message);

        ex = Assert.Throws<Iceoryx2Exception>(() => publisher.SendCopy(new byte[4096]));
        Assert.Equal(Iceoryx2ErrorCode.PayloadTooLarge, ex.ErrorCode);

        // the publisher is still usable afterwards
        var loan = publisher.Loan(128);
        loan.Discard();
    }

    [Iceoryx2Fact]
    public void More_publishers_than_the_maximum_is_a_clear_exception()
    {
        string service = TestNames.UniqueService("too-many-publishers");
        using var node = Iceoryx2Node.Create();
        using var first = node.CreatePublisher(service, Options(maxPublishers: 1));

        var ex = Assert.Throws<Iceoryx2Exception>(() => node.CreatePublisher(service, Options(maxPublishers: 1)));
        Assert.Equal(Iceoryx2ErrorCode.PortLimitExceeded, ex.ErrorCode);
        Assert.Contains("maximum of 1 publisher", ex.Message);

        // asking an existing service for more publishers than it was created with
        ex = Assert.Throws<Iceoryx2Exception>(() => node.CreatePublisher(service, Options(maxPublishers: 3)));
        Assert.Equal(Iceoryx2ErrorCode.ServiceCapacityExceeded, ex.ErrorCode);
        Assert.Contains("publishers", ex.Message);
    }

    [Iceoryx2Fact]
    public void More_subscribers_than_the_maximum_is_a_clear_exception()
    {
        string service = TestNames.UniqueService("too-many-subscribers");
        using var node = Iceoryx2Node.Create();
        using var a = node.CreateSubscriber(service, Options(maxSubscribers: 2));
        using var b = node.CreateSubscriber(service, Options(maxSubscribers: 2));
        var ex = Assert.Throws<Iceoryx2Exception>(() => node.CreateSubscriber(service, Options(maxSubscribers: 2)));
        Assert.Equal(Iceoryx2ErrorCode.PortLimitExceeded, ex.ErrorCode);
    }

    [Iceoryx2Fact]
    public void Mismatched_delivery_mode_is_a_clear_exception()
    {
        string service = TestNames.UniqueService("mode-mismatch");
        using var node = Iceoryx2Node.Create();
        using var publisher = node.CreatePublisher(service, Options());
        var ex = Assert.Throws<Iceoryx2Exception>(() =>
            node.CreateSubscriber(service, Options() with { DeliveryMode = DeliveryMode.Lossy }));
        Assert.Equal(Iceoryx2ErrorCode.ServiceIncompatible, ex.ErrorCode);
        Assert.Contains("delivery mode", ex.Message);
    }

    [Iceoryx2Fact]
    public void Too_many_loans_invalid_tokens_and_too_many_borrows_are_clear_exceptions()
    {
        string service = TestNames.UniqueService("loans");
        var options = Options() with { PublisherMaxLoanedSamples = 1, SubscriberMaxBorrowedSamples = 1 };
        using var node = Iceoryx2Node.Create();
        using var publisher = node.CreatePublisher(service, options);
        using var subscriber = node.CreateSubscriber(service, options);
        Assert.True(publisher.WaitForSubscribers(1, TimeSpan.FromSeconds(5)));

        var first = publisher.Loan(8);
        var ex = Assert.Throws<Iceoryx2Exception>(() => publisher.Loan(8));
        Assert.Equal(Iceoryx2ErrorCode.LoanFailed, ex.ErrorCode);
        ulong token = first.Token;
        first.Payload.Clear();
        Assert.Equal(1, first.Send());
        ex = Assert.Throws<Iceoryx2Exception>(() => publisher.Send(token));
        Assert.Equal(Iceoryx2ErrorCode.InvalidToken, ex.ErrorCode);

        publisher.SendCopy(new byte[8]);
        Assert.True(subscriber.TryReceive(out var held));
        ex = Assert.Throws<Iceoryx2Exception>(() => subscriber.TryReceive(out _));
        Assert.Equal(Iceoryx2ErrorCode.ExceedsMaxBorrows, ex.ErrorCode);
        subscriber.Release(held);
        Assert.True(subscriber.TryReceive(out held));
        subscriber.Release(held);
    }

    [Iceoryx2Fact]
    public void Invalid_arguments_and_disposed_objects_are_clear_exceptions()
    {
        using var node = Iceoryx2Node.Create();
        var ex = Assert.Throws<Iceoryx2Exception>(() => node.CreatePublisher("", Options()));
        Assert.Equal(Iceoryx2ErrorCode.InvalidArgument, ex.ErrorCode);
        Assert.Throws<ArgumentOutOfRangeException>(() => node.CreatePublisher("x", Options(size: 0)));

        var publisher = node.CreatePublisher(TestNames.UniqueService("disposed"), Options());
        publisher.Dispose();
        publisher.Dispose();
        Assert.Throws<ObjectDisposedException>(() => publisher.Loan(1));
    }

    [Iceoryx2Fact]
    public void Ports_stay_usable_after_their_node_is_disposed()
    {
        string service = TestNames.UniqueService("node-first");
        var node = Iceoryx2Node.Create();
        var publisher = node.CreatePublisher(service, Options());
        var subscriber = node.CreateSubscriber(service, Options());
        node.Dispose();
        Assert.True(publisher.WaitForSubscribers(1, TimeSpan.FromSeconds(5)));
        Assert.Equal(1, publisher.SendCopy(new byte[10]));
        Assert.True(subscriber.TryReceiveCopy(new byte[128], out int len));
        Assert.Equal(10, len);
        subscriber.Dispose();
        publisher.Dispose();
        Assert.False(Iceoryx2Library.ServiceExists(service, Iceoryx2MessagingPattern.PublishSubscribe));
    }
}
