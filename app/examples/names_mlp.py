# A character-level model that makes up names, as the "makemore" lessons build one after the tutorial: each
# letter predicted from the three before it (an embedding of each letter, a hidden layer, a softmax over the 27
# characters), trained on the names below, then sampled from one letter at a time with torch.multinomial.
import torch
from torch import nn
from torch.nn import functional as F

NAMES = """emma olivia ava isabella sophia charlotte mia amelia harper evelyn abigail emily elizabeth mila ella
avery sofia camila aria scarlett victoria madison luna grace chloe penelope layla riley zoey nora lily eleanor
hannah lillian addison aubrey ellie stella natalie zoe leah hazel violet aurora savannah audrey brooklyn bella
claire skylar lucy paisley everly anna caroline nova genesis emilia kennedy samantha maya willow kinsley naomi
aaliyah elena sarah ariana allison gabriella alice madelyn cora ruby eva serenity autumn adeline hailey gianna
valentina isla eliana quinn nevaeh ivy sadie piper lydia alexa josephine emery julia delilah arianna vivian
liam noah william james oliver benjamin elijah lucas mason logan alexander ethan jacob michael daniel henry
jackson sebastian aiden matthew samuel david joseph carter owen wyatt john jack luke jayden dylan grayson levi
isaac gabriel julian mateo anthony jaxon lincoln joshua christopher andrew theodore caleb ryan asher nathan
thomas leo isaiah charles josiah hudson christian hunter connor eli ezra aaron landon adrian jonathan nolan
jeremiah easton elias colton cameron carson robert angel maverick nicholas dominic jaxson greyson adam ian
austin santiago jordan cooper brayden roman evan ezekiel xavier jose jace jameson leonardo bryson axel everett
parker kayden miles sawyer jason""".split()

chars = sorted(set("".join(NAMES)))
stoi = {c: i + 1 for i, c in enumerate(chars)}
stoi["."] = 0  # the start and the end of a name
itos = {i: c for c, i in stoi.items()}
context = 3

xs, ys = [], []
for name in NAMES:
    window = [0] * context
    for c in name + ".":
        xs.append(window)
        ys.append(stoi[c])
        window = window[1:] + [stoi[c]]
X, Y = torch.tensor(xs), torch.tensor(ys)

torch.manual_seed(42)
model = nn.Sequential(
    nn.Embedding(len(stoi), 10),  # each letter as 10 learned numbers
    nn.Flatten(),                 # the three letters side by side: 30 numbers
    nn.Linear(3 * 10, 128), nn.Tanh(),
    nn.Linear(128, len(stoi)),    # a score for each possible next letter
)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

for step in range(1500):
    batch = torch.randint(0, len(X), (64,))
    loss = F.cross_entropy(model(X[batch]), Y[batch])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 300 == 0:
        with torch.no_grad():
            print(f"step {step}: mini-batch loss {loss.item():.4f}, whole set {F.cross_entropy(model(X), Y).item():.4f}")

g = torch.Generator().manual_seed(2147483647)
with torch.no_grad():
    for _ in range(8):
        window, out = [0] * context, []
        while len(out) < 20:
            probs = F.softmax(model(torch.tensor([window])), dim=1)
            ix = torch.multinomial(probs, num_samples=1, generator=g).item()
            if ix == 0:
                break
            out.append(itos[ix])
            window = window[1:] + [ix]
        print("".join(out))
