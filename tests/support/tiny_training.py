"""A one-layer Llama of a few hundred weights with its optimizer and schedule, trained a step at a
time, for tests of what a trainer saves and resumes (torch and transformers imported: a test
module importorskips them first)."""
import torch
import transformers


def tiny_model():
    config = transformers.LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                      num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64)
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(config)


def train_one_step(model, optimizer, scheduler):
    loss = model(input_ids=torch.tensor([[1, 2, 3, 4]]), labels=torch.tensor([[1, 2, 3, 4]])).loss
    loss.backward()
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad()


def optimizer_and_scheduler(model):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0 / (step + 1))
    return optimizer, scheduler
