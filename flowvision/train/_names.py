"""Names the command line offers, kept free of engine imports so ``flowvision --help`` stays fast."""

#: optimizer names of :func:`flowvision.train.create_optimizer_v2` (timm's spellings)
OPTIMIZERS = ("sgd", "nesterov", "momentum", "adam", "adamw", "lamb", "rmsprop")
#: schedule names of :func:`flowvision.train.create_scheduler_v2`
SCHEDULERS = ("cosine", "tanh", "poly", "step", "multistep", "constant", "none")
