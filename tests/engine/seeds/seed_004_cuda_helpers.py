# Seed 004: the table of GPU helpers, each called as the table shows.
import torch

print(torch.cuda.is_available())
print(torch.cuda.device_count())
if torch.cuda.is_available():
    device = torch.device('cuda')
    print(torch.cuda.current_device())
    print(torch.cuda.get_device_capability(device))
    print(torch.cuda.get_device_name(device))
torch.cuda.empty_cache()
torch.cuda.manual_seed(0)
torch.cuda.manual_seed_all(0)
